package dev.hamilock.extender.v1;

import static dev.hamilock.extender.v1.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The preempt verb's wire types against bodies written by Go's {@code json.Marshal} of {@code
 * k8s.io/kube-scheduler@v0.37.2/extender/v1} types (generated once with the module of
 * testing/realcluster: a {@code nodeCacheCapable} request, a full-pods request, a result, an empty
 * result).
 */
class ExtenderPreemptionJsonTest {
  static final String POD =
      "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"hi\",\"namespace\":\"default\",\"uid\":\"u-hi\"},\"spec\":{\"containers\":null,\"schedulerName\":\"hami-scheduler\",\"priority\":100},\"status\":{}}";
  static final String META_ARGS =
      "{\"Pod\":"
          + POD
          + ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[{\"UID\":\"u-lo\"}],\"NumPDBViolations\":0},\"node-b\":{\"Pods\":[{\"UID\":\"u-2\"}],\"NumPDBViolations\":1}}}";
  static final String FULL_ARGS =
      "{\"Pod\":"
          + POD
          + ",\"NodeNameToVictims\":{\"node-a\":{\"Pods\":[{\"metadata\":{\"name\":\"lo\\u003c1\\u003e\",\"namespace\":\"default\",\"uid\":\"u-lo\"},\"spec\":{\"containers\":null},\"status\":{}}],\"NumPDBViolations\":2}},\"NodeNameToMetaVictims\":null}";
  static final String RESULT =
      "{\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[{\"UID\":\"u-lo\"},{\"UID\":\"u-x\\u0026y\"}],\"NumPDBViolations\":0}}}";

  @ParameterizedTest
  @ValueSource(strings = {META_ARGS, FULL_ARGS})
  void argsRoundTripByteExactly(String wire) throws Exception {
    assertThat(ExtenderJson.encode(ExtenderJson.decodePreemptionArgs(utf8(wire)))).isEqualTo(wire);
  }

  @ParameterizedTest
  @ValueSource(strings = {RESULT, "{\"NodeNameToMetaVictims\":null}"})
  void resultsRoundTripByteExactly(String wire) throws Exception {
    assertThat(ExtenderJson.encode(ExtenderJson.decodePreemptionResult(utf8(wire))))
        .isEqualTo(wire);
  }

  @Test
  void metaArgsDecodeToUidsAndViolations() throws Exception {
    ExtenderPreemptionArgs a = ExtenderJson.decodePreemptionArgs(utf8(META_ARGS));
    assertThat(a.nodeNameToVictims()).isEmpty();
    assertThat(a.nodeNameToMetaVictims().orElseThrow())
        .containsExactly(
            Map.entry("node-a", new MetaVictims(List.of(new MetaPod("u-lo")), 0)),
            Map.entry("node-b", new MetaVictims(List.of(new MetaPod("u-2")), 1)));
    assertThat(a.pod().orElseThrow().path("spec").path("priority").asInt()).isEqualTo(100);
  }

  @Test
  void fullArgsDecodeToPodObjects() throws Exception {
    ExtenderPreemptionArgs a = ExtenderJson.decodePreemptionArgs(utf8(FULL_ARGS));
    Victims v = a.nodeNameToVictims().orElseThrow().get("node-a");
    assertThat(v.numPDBViolations()).isEqualTo(2);
    assertThat(v.pods())
        .singleElement()
        .satisfies(p -> assertThat(p.path("metadata").path("name").asText()).isEqualTo("lo<1>"));
    assertThat(a.nodeNameToMetaVictims()).isEmpty();
  }

  @Test
  void resultMapIsWrittenInGoKeyOrder() {
    Map<String, MetaVictims> m = new LinkedHashMap<>();
    m.put("node-b", new MetaVictims(List.of(new MetaPod("u-2")), 1));
    m.put("node-a", new MetaVictims(List.of(), 0));
    assertThat(ExtenderJson.encode(new ExtenderPreemptionResult(Optional.of(m))))
        .isEqualTo(
            "{\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[],\"NumPDBViolations\":0},\"node-b\":{\"Pods\":[{\"UID\":\"u-2\"}],\"NumPDBViolations\":1}}}");
  }

  @Test
  void keysMatchCaseInsensitivelyLikeGo() throws Exception {
    ExtenderPreemptionResult r =
        ExtenderJson.decodePreemptionResult(
            utf8(
                "{\"nodenametometavictims\":{\"n\":{\"pods\":[{\"uid\":\"u\"}],\"numpdbviolations\":3}}}"));
    assertThat(r.nodeNameToMetaVictims().orElseThrow().get("n"))
        .isEqualTo(new MetaVictims(List.of(new MetaPod("u")), 3));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[],\"NumPDBViolations\":1.5}}}|ExtenderPreemptionResult.NodeNameToMetaVictims[\"node-a\"].NumPDBViolations|1.5",
        "{\"NodeNameToMetaVictims\":{\"node-a\":null}}|ExtenderPreemptionResult.NodeNameToMetaVictims[\"node-a\"]|NULL",
        "{\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[\"u\"]}}}|ExtenderPreemptionResult.NodeNameToMetaVictims[\"node-a\"].Pods[0]|STRING",
        "{\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[{\"UID\":7}]}}}|ExtenderPreemptionResult.NodeNameToMetaVictims[\"node-a\"].Pods[0].UID|7",
        "{\"NodeNameToMetaVictims\":[]}|ExtenderPreemptionResult.NodeNameToMetaVictims|ARRAY"
      })
  void badValuesAreTypedErrorsNamingFieldAndValue(String c) {
    String[] p = c.split("\\|");
    assertThatThrownBy(() -> ExtenderJson.decodePreemptionResult(utf8(p[0])))
        .isInstanceOfSatisfying(
            ExtenderJsonException.class, e -> assertThat(e.field()).isEqualTo(p[1]))
        .hasMessageContaining(p[2]);
  }

  @Test
  void victimPodThatIsNotAnObjectIsNamed() {
    assertThatThrownBy(
            () ->
                ExtenderJson.decodePreemptionArgs(
                    utf8("{\"NodeNameToVictims\":{\"n\":{\"Pods\":[1]}}}")))
        .isInstanceOfSatisfying(
            ExtenderJsonException.class,
            e ->
                assertThat(e.field())
                    .isEqualTo("ExtenderPreemptionArgs.NodeNameToVictims[\"n\"].Pods[0]"));
  }
}
