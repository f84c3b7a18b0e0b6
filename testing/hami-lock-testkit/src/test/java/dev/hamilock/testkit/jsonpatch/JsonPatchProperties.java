package dev.hamilock.testkit.jsonpatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.booleans;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** Properties of the evanphx-v4 JSON patch engine and pointer escaping. */
class JsonPatchProperties {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  enum State {
    ABSENT,
    NULL,
    VALUE
  }

  /** Member names from the characters pointers must escape and their neighbours, 0–12 long. */
  static Gen<String> keys() {
    return Gens.strings("ab~/01.-_ ", 0, 12);
  }

  /** Any text up to 255 characters. */
  static Gen<String> texts() {
    return Gens.anyText(255);
  }

  @Test
  void escapeRoundTrips() {
    Props.qt(300)
        .forAll(keys(), texts())
        .checkAssert(
            (key, any) -> {
              assertThat(JsonPointer.unescape(JsonPointer.escape(key))).isEqualTo(key);
              assertThat(JsonPointer.unescape(JsonPointer.escape(any))).isEqualTo(any);
              assertThat(JsonPointer.escape(key)).doesNotContain("/");
            });
  }

  @Test
  void escapedPointerAddressesTheMember() {
    Props.qt(200)
        .forAll(keys(), texts())
        .checkAssert((key, value) -> Props.unchecked(() -> escapedPointer(key, value)));
  }

  private static void escapedPointer(String key, String value) throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    doc.putObject("metadata").putObject("annotations").put(key, value);
    String path = JsonPointer.of("metadata", "annotations", key);
    JsonPatch test =
        JsonPatch.parse(
            "[{\"op\":\"test\",\"path\":"
                + MAPPER.writeValueAsString(path)
                + ",\"value\":"
                + MAPPER.writeValueAsString(value)
                + "}]");
    assertThat(test.apply(doc)).isEqualTo(doc);
  }

  @Test
  void testNullPassesIffMemberAbsentOrNull() {
    Props.qt(300)
        .forAll(keys(), Generate.enumValues(State.class), texts(), booleans().all())
        .checkAssert(
            (key, state, value, explicitNull) ->
                Props.unchecked(() -> testNull(key, state, value, explicitNull)));
  }

  private static void testNull(String key, State state, String value, boolean explicitNull)
      throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    ObjectNode ann = doc.putObject("metadata").putObject("annotations");
    ann.put("unrelated", "x");
    switch (state) {
      case NULL -> ann.putNull(key);
      case VALUE -> ann.put(key, value);
      default -> {}
    }
    if (state == State.ABSENT) {
      ann.remove(key);
    }
    String path = MAPPER.writeValueAsString(JsonPointer.of("metadata", "annotations", key));
    JsonPatch p =
        JsonPatch.parse(
            "[{\"op\":\"test\",\"path\":" + path + (explicitNull ? ",\"value\":null" : "") + "}]");
    boolean expectPass = state != State.VALUE;
    if (expectPass) {
      assertThat(p.apply(doc)).isEqualTo(doc);
    } else {
      assertThatThrownBy(() -> p.apply(doc)).isInstanceOf(PatchNotApplicableException.class);
    }
  }

  @Test
  void failedPatchLeavesTheInputUntouched() {
    Props.qt(200)
        .forAll(keys(), texts())
        .checkAssert((key, value) -> Props.unchecked(() -> failedPatch(key, value)));
  }

  private static void failedPatch(String key, String value) throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    doc.putObject("metadata").putObject("annotations").put("k", "v");
    JsonNode before = doc.deepCopy();
    String path = MAPPER.writeValueAsString(JsonPointer.of("metadata", "annotations", key));
    JsonPatch p =
        JsonPatch.parse(
            "[{\"op\":\"add\",\"path\":"
                + path
                + ",\"value\":"
                + MAPPER.writeValueAsString(value)
                + "},{\"op\":\"remove\",\"path\":\"/metadata/missing/x\"}]");
    assertThatThrownBy(() -> p.apply(doc)).isInstanceOf(PatchNotApplicableException.class);
    assertThat(doc).isEqualTo(before);
  }

  @Test
  void mergePatchNullRemovesOnlyThatKey() {
    Props.qt(200)
        .forAll(keys(), texts())
        .checkAssert((key, value) -> Props.unchecked(() -> mergePatchNull(key, value)));
  }

  private static void mergePatchNull(String key, String value) throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    ObjectNode ann = doc.putObject("metadata").putObject("annotations");
    ann.put(key, value);
    ann.put("keep-" + key, "kept");
    ObjectNode patch = MAPPER.createObjectNode();
    patch.putObject("metadata").putObject("annotations").putNull(key);
    JsonNode out = MergePatch.apply(doc, patch);
    assertThat(out.path("metadata").path("annotations").has(key)).isFalse();
    assertThat(out.path("metadata").path("annotations").path("keep-" + key).asText())
        .isEqualTo("kept");
    assertThat(doc.path("metadata").path("annotations").has(key)).as("input untouched").isTrue();
  }
}
