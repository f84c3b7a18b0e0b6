package dev.hamilock.testkit.jsonpatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** evanphx/json-patch v4 quirks, one example each. */
class JsonPatchTest {
  private static final ObjectMapper M = new ObjectMapper();

  private static JsonNode apply(String doc, String patch) throws Exception {
    return JsonPatch.parse(patch).apply(M.readTree(doc));
  }

  @Test
  void arrayOperationsIncludingNegativeIndexAndAppend() throws Exception {
    assertThat(
            apply("{\"a\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/a/-\",\"value\":3}]").toString())
        .isEqualTo("{\"a\":[1,2,3]}");
    assertThat(
            apply("{\"a\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/a/0\",\"value\":0}]").toString())
        .isEqualTo("{\"a\":[0,1,2]}");
    assertThat(apply("{\"a\":[1,2]}", "[{\"op\":\"remove\",\"path\":\"/a/-1\"}]").toString())
        .isEqualTo("{\"a\":[1]}");
    assertThatThrownBy(
            () -> apply("{\"a\":[1]}", "[{\"op\":\"replace\",\"path\":\"/a/5\",\"value\":0}]"))
        .isInstanceOf(PatchNotApplicableException.class);
  }

  @Test
  void moveCopyAndRootPath() throws Exception {
    assertThat(apply("{\"a\":1}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/b\"}]").toString())
        .isEqualTo("{\"b\":1}");
    assertThat(
            apply("{\"a\":{\"x\":1}}", "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/b\"}]")
                .toString())
        .isEqualTo("{\"a\":{\"x\":1},\"b\":{\"x\":1}}");
    assertThatThrownBy(
            () -> apply("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{}}]"))
        .isInstanceOf(PatchNotApplicableException.class);
    assertThatThrownBy(() -> apply("{\"a\":1}", "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]"))
        .isInstanceOf(PatchNotApplicableException.class)
        .hasMessageContaining("frobnicate");
  }

  @Test
  void undecodablePatchesAreMalformed() {
    assertThatThrownBy(() -> JsonPatch.parse("{\"op\":\"add\"}"))
        .isInstanceOf(MalformedPatchException.class);
    assertThatThrownBy(() -> JsonPatch.parse("[1]")).isInstanceOf(MalformedPatchException.class);
    assertThatThrownBy(() -> JsonPatch.parse("[{")).isInstanceOf(MalformedPatchException.class);
  }

  @Test
  void numbersCompareByRepresentationLikeTheGoLibrary() throws Exception {
    assertThat(apply("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":1}]").toString())
        .isEqualTo("{\"a\":1}");
    assertThatThrownBy(
            () -> apply("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":1.0}]"))
        .isInstanceOf(PatchNotApplicableException.class);
  }

  @Test
  void mergePatchRejectsScalarsAndReplacesArrays() throws Exception {
    assertThatThrownBy(() -> MergePatch.apply(M.readTree("{}"), M.readTree("null")))
        .isInstanceOf(MalformedPatchException.class);
    assertThatThrownBy(() -> MergePatch.apply(M.readTree("{}"), M.readTree("3")))
        .isInstanceOf(MalformedPatchException.class);
    assertThat(MergePatch.apply(M.readTree("{\"a\":[1,2]}"), M.readTree("{\"a\":[3]}")).toString())
        .isEqualTo("{\"a\":[3]}");
    assertThat(
            MergePatch.apply(M.readTree("{}"), M.readTree("{\"a\":{\"b\":null,\"c\":1}}"))
                .toString())
        .isEqualTo("{\"a\":{\"c\":1}}");
  }
}
