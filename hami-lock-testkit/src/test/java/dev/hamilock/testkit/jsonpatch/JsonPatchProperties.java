package dev.hamilock.testkit.jsonpatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Properties of the evanphx-v4 JSON patch engine and pointer escaping. */
class JsonPatchProperties {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  enum State { ABSENT, NULL, VALUE }

  @Provide
  Arbitrary<String> keys() {
    return Arbitraries.strings().withChars("ab~/01.-_ ").ofMinLength(0).ofMaxLength(12);
  }

  @Property(tries = 300)
  void escapeRoundTrips(@ForAll("keys") String key, @ForAll String any) {
    assertThat(JsonPointer.unescape(JsonPointer.escape(key))).isEqualTo(key);
    assertThat(JsonPointer.unescape(JsonPointer.escape(any))).isEqualTo(any);
    assertThat(JsonPointer.escape(key)).doesNotContain("/");
  }

  @Property(tries = 200)
  void escapedPointerAddressesTheMember(@ForAll("keys") String key, @ForAll String value) throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    doc.putObject("metadata").putObject("annotations").put(key, value);
    String path = JsonPointer.of("metadata", "annotations", key);
    JsonPatch test = JsonPatch.parse("[{\"op\":\"test\",\"path\":" + MAPPER.writeValueAsString(path)
        + ",\"value\":" + MAPPER.writeValueAsString(value) + "}]");
    assertThat(test.apply(doc)).isEqualTo(doc);
  }

  @Property(tries = 300)
  void testNullPassesIffMemberAbsentOrNull(@ForAll("keys") String key, @ForAll State state,
      @ForAll String value, @ForAll boolean explicitNull) throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    ObjectNode ann = doc.putObject("metadata").putObject("annotations");
    ann.put("unrelated", "x");
    switch (state) {
      case NULL -> ann.putNull(key);
      case VALUE -> ann.put(key, value);
      default -> { }
    }
    if (state == State.ABSENT) {
      ann.remove(key);
    }
    String path = MAPPER.writeValueAsString(JsonPointer.of("metadata", "annotations", key));
    JsonPatch p = JsonPatch.parse("[{\"op\":\"test\",\"path\":" + path
        + (explicitNull ? ",\"value\":null" : "") + "}]");
    boolean expectPass = state != State.VALUE;
    if (expectPass) {
      assertThat(p.apply(doc)).isEqualTo(doc);
    } else {
      assertThatThrownBy(() -> p.apply(doc)).isInstanceOf(PatchNotApplicableException.class);
    }
  }

  @Property(tries = 200)
  void failedPatchLeavesTheInputUntouched(@ForAll("keys") String key, @ForAll String value) throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    doc.putObject("metadata").putObject("annotations").put("k", "v");
    JsonNode before = doc.deepCopy();
    String path = MAPPER.writeValueAsString(JsonPointer.of("metadata", "annotations", key));
    JsonPatch p = JsonPatch.parse("[{\"op\":\"add\",\"path\":" + path + ",\"value\":"
        + MAPPER.writeValueAsString(value) + "},{\"op\":\"remove\",\"path\":\"/metadata/missing/x\"}]");
    assertThatThrownBy(() -> p.apply(doc)).isInstanceOf(PatchNotApplicableException.class);
    assertThat(doc).isEqualTo(before);
  }

  @Property(tries = 200)
  void mergePatchNullRemovesOnlyThatKey(@ForAll("keys") String key, @ForAll String value) throws Exception {
    ObjectNode doc = MAPPER.createObjectNode();
    ObjectNode ann = doc.putObject("metadata").putObject("annotations");
    ann.put(key, value);
    ann.put("keep-" + key, "kept");
    ObjectNode patch = MAPPER.createObjectNode();
    patch.putObject("metadata").putObject("annotations").putNull(key);
    JsonNode out = MergePatch.apply(doc, patch);
    assertThat(out.path("metadata").path("annotations").has(key)).isFalse();
    assertThat(out.path("metadata").path("annotations").path("keep-" + key).asText()).isEqualTo("kept");
    assertThat(doc.path("metadata").path("annotations").has(key)).as("input untouched").isTrue();
  }
}
