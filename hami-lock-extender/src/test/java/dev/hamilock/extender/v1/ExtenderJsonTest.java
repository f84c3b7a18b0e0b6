package dev.hamilock.extender.v1;

import static dev.hamilock.extender.v1.Fixtures.text;
import static dev.hamilock.extender.v1.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Wire-level tests with the recorded payloads F-80..F-82 (see fixtures/README.md). */
class ExtenderJsonTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "F-82-filter-result-success.json",
        "F-82-filter-result-nofit.json",
        "F-82-filter-result-error.json"
      })
  void filterResultsRoundTripByteExactly(String fixture) throws Exception {
    String wire = text(fixture);
    ExtenderFilterResult r = ExtenderJson.decodeFilterResult(utf8(wire));
    assertThat(ExtenderJson.encode(r)).isEqualTo(wire);
  }

  @Test
  void hamiSuccessShapeIsF82() {
    assertThat(ExtenderJson.encode(ExtenderFilterResult.ofNodeNames(List.of("node-a"))))
        .isEqualTo(text("F-82-filter-result-success.json"));
  }

  @Test
  void noFitShapeIsF82WithMapKeysSortedLikeGo() {
    Map<String, String> failed = new LinkedHashMap<>();
    failed.put("node-b", "node unregistered"); // inserted out of order on purpose
    failed.put("node-a", "1/1 CardInsufficientMemory");
    assertThat(ExtenderJson.encode(ExtenderFilterResult.ofFailedNodes(failed)))
        .isEqualTo(text("F-82-filter-result-nofit.json"));
  }

  @Test
  void errorShapeIsF82() {
    assertThat(ExtenderJson.encode(ExtenderFilterResult.ofError("extender args missing pod")))
        .isEqualTo(text("F-82-filter-result-error.json"));
  }

  @Test
  void decodesRecordedNoFitReasons() throws Exception {
    ExtenderFilterResult r =
        ExtenderJson.decodeFilterResult(Fixtures.bytes("F-82-filter-result-nofit.json"));
    assertThat(r.nodeNames()).isEmpty();
    assertThat(r.failedNodes())
        .contains(Map.of("node-a", "1/1 CardInsufficientMemory", "node-b", "node unregistered"));
    assertThat(r.failedAndUnresolvableNodes()).isEmpty();
    assertThat(r.error()).isEmpty();
  }

  @Test
  void bindingArgsOfARealPodDecodeAndEncodeWithExactKeys() throws Exception {
    String wire = text("F-82-binding-args.json");
    ExtenderBindingArgs a = ExtenderJson.decodeBindingArgs(utf8(wire));
    assertThat(a)
        .isEqualTo(
            new ExtenderBindingArgs(
                "gpu-test-6f58db7c7c-nszdp",
                "default",
                "81794181-4045-4880-86ba-5282d73056d7",
                "node-a"));
    assertThat(ExtenderJson.encode(a)).isEqualTo(wire);
  }

  @ParameterizedTest
  @ValueSource(strings = {"F-82-binding-result-ok.json", "F-82-binding-result-error.json"})
  void bindingResultsRoundTrip(String fixture) throws Exception {
    String wire = text(fixture);
    ExtenderBindingResult r = ExtenderJson.decodeBindingResult(utf8(wire));
    assertThat(r.isSuccess()).isEqualTo(fixture.endsWith("ok.json"));
    assertThat(ExtenderJson.encode(r)).isEqualTo(wire);
  }

  @Test
  void hamiTestBodiesWithoutPodDecodeToAbsentPod() throws Exception {
    for (String f : List.of("F-81-filter-args-no-pod.json", "F-81-filter-args-null-pod.json")) {
      ExtenderArgs a = ExtenderJson.decodeArgs(Fixtures.bytes(f));
      assertThat(a.pod()).as(f).isEmpty();
      assertThat(a.nodes()).as(f).isEmpty();
      assertThat(a.nodeNames()).as(f).contains(List.of("node1"));
    }
  }

  @Test
  void keysMatchCaseInsensitivelyLikeGoAndUnknownKeysAreIgnored() throws Exception {
    ExtenderArgs a =
        ExtenderJson.decodeArgs(
            utf8(
                "{\"pod\":{\"metadata\":{\"name\":\"p\"}},\"nodenames\":[\"a\",\"b\"],\"Extra\":42}"));
    assertThat(a.pod()).map(p -> p.at("/metadata/name").asText()).contains("p");
    assertThat(a.nodeNames()).contains(List.of("a", "b"));
    ExtenderBindingArgs b =
        ExtenderJson.decodeBindingArgs(
            utf8(
                "{\"podname\":\"p\",\"PODNAMESPACE\":\"ns\",\"podUID\":\"u\",\"node\":\"n\",\"x\":null}"));
    assertThat(b).isEqualTo(new ExtenderBindingArgs("p", "ns", "u", "n"));
  }

  @Test
  void lastOccurrenceOfAKeyWinsAsInGo() throws Exception {
    ExtenderBindingArgs b =
        ExtenderJson.decodeBindingArgs(utf8("{\"Node\":\"first\",\"node\":\"second\"}"));
    assertThat(b.node()).isEqualTo("second");
    assertThat(b.podName()).isEmpty();
  }

  @Test
  void argsEncodeWithPascalCaseKeysAndNulls() {
    ObjectNode pod = JsonNodeFactory.instance.objectNode();
    pod.putObject("metadata").put("name", "p");
    String wire = ExtenderJson.encode(ExtenderArgs.ofNodeNames(pod, List.of("node-a")));
    assertThat(wire)
        .isEqualTo(
            "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":null,\"NodeNames\":[\"node-a\"]}");
  }

  @Test
  void stringsAreEscapedLikeGoEncodingJson() {
    String wire =
        ExtenderJson.encode(new ExtenderBindingResult("a<b>&c\u2028\"\n\u0001\u001f\t\u00e9"));
    assertThat(wire)
        .isEqualTo("{\"Error\":\"a\\u003cb\\u003e\\u0026c\\u2028\\\"\\n\\u0001\\u001f\\t\u00e9\"}");
  }

  @Test
  void wrongTypesAreRejectedNamingTheField() {
    assertThatThrownBy(() -> ExtenderJson.decodeArgs(utf8("{\"NodeNames\":\"node-a\"}")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("ExtenderArgs.NodeNames")
        .satisfies(
            e ->
                assertThat(((ExtenderJsonException) e).field())
                    .isEqualTo("ExtenderArgs.NodeNames"));
    assertThatThrownBy(() -> ExtenderJson.decodeArgs(utf8("{\"NodeNames\":[\"a\",null]}")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("ExtenderArgs.NodeNames[1]");
    assertThatThrownBy(() -> ExtenderJson.decodeArgs(utf8("{\"Pod\":[]}")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("ExtenderArgs.Pod");
    assertThatThrownBy(() -> ExtenderJson.decodeBindingArgs(utf8("{\"PodUID\":12}")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("ExtenderBindingArgs.PodUID")
        .hasMessageContaining("12");
    assertThatThrownBy(() -> ExtenderJson.decodeFilterResult(utf8("{\"FailedNodes\":{\"n\":1}}")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("FailedNodes[\"n\"]");
    assertThatThrownBy(() -> ExtenderJson.decodeArgs(utf8("[1]")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("expected a JSON object");
  }

  @Test
  void malformedOrTrailingJsonIsRejected() {
    assertThatThrownBy(() -> ExtenderJson.decodeArgs(utf8("{\"Pod\":")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("malformed JSON")
        .satisfies(e -> assertThat(((ExtenderJsonException) e).field()).isEmpty());
    assertThatThrownBy(() -> ExtenderJson.decodeBindingArgs(utf8("{} {}")))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("malformed JSON");
    assertThatThrownBy(() -> ExtenderJson.decodeBindingArgs(utf8("")))
        .isInstanceOf(ExtenderJsonException.class);
  }

  @Test
  void topLevelNullDecodesToZeroValuesAsInGo() throws Exception {
    assertThat(ExtenderJson.decodeBindingArgs(utf8("null")))
        .isEqualTo(new ExtenderBindingArgs("", "", "", ""));
    assertThat(ExtenderJson.decodeArgs(utf8("null")).pod()).isEmpty();
  }

  @Test
  void recordsAreImmutableCopies() throws Exception {
    ObjectNode pod = JsonNodeFactory.instance.objectNode().put("kind", "Pod");
    ExtenderArgs a = new ExtenderArgs(Optional.of(pod), Optional.empty(), Optional.empty());
    pod.put("kind", "Changed");
    a.pod().orElseThrow().put("kind", "AlsoChanged");
    assertThat(a.pod().orElseThrow().get("kind").asText()).isEqualTo("Pod");
  }
}
