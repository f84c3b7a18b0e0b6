package dev.hamilock.device.spi.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The one Pod/Node reader against the cases of both readers it replaced: hami-lock-k8s's ObjectJson
 * (Gson, API-server answers) and hami-lock-extender's KubeJson (Jackson, extender payloads). Where
 * they disagreed the table says which rule won and why (see {@link JsonViews}).
 */
class JsonViewsTest {

  private static PodView pod(String json) throws MalformedObjectException {
    return JsonViews.podView(JsonViews.readObject(json.getBytes(StandardCharsets.UTF_8)));
  }

  private static NodeView node(String json) throws MalformedObjectException {
    return JsonViews.nodeView(JsonViews.readObject(json.getBytes(StandardCharsets.UTF_8)));
  }

  /** {@code {"metadata":{"name":"p","namespace":"ns"<meta>}<rest>}} */
  private static String podJson(String meta, String rest) {
    return "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"" + meta + "}" + rest + "}";
  }

  /**
   * Native sidecars (Kubernetes' isRestartableInitContainer): exactly {@code Always} on an init
   * container; {@code Never}/{@code OnFailure} init containers run to completion, and a regular
   * container's own {@code restartPolicy} leaves it an app container.
   */
  @Test
  void restartPolicyMakesAnInitContainerASidecar() throws Exception {
    PodView v =
        pod(
            podJson(
                "",
                ",\"spec\":{\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":\"Always\"},"
                    + "{\"name\":\"i\",\"restartPolicy\":\"OnFailure\"},{\"name\":\"j\"},"
                    + "{\"name\":\"e\",\"restartPolicy\":\"\"}],"
                    + "\"containers\":[{\"name\":\"c\",\"restartPolicy\":\"Always\"}]}"));
    assertThat(v.initContainers().get(0).restartPolicy()).contains("Always");
    assertThat(v.initContainers().get(1).restartPolicy()).contains("OnFailure");
    assertThat(v.initContainers().get(2).restartPolicy()).isEmpty();
    assertThat(v.initContainers().get(3).restartPolicy()).as("\"\" reads as absent").isEmpty();
    assertThat(v.containerRoles())
        .containsExactly(
            ContainerRole.SIDECAR,
            ContainerRole.INIT,
            ContainerRole.INIT,
            ContainerRole.INIT,
            ContainerRole.APP);
  }

  @Test
  void everyReadFieldIsMapped() throws Exception {
    PodView v =
        pod(
            podJson(
                ",\"uid\":\"u-1\",\"labels\":{\"l\":\"1\"},\"annotations\":{\"a\":\"b\"},"
                    + "\"deletionTimestamp\":\"2026-08-01T06:00:00Z\",\"resourceVersion\":\"42\"",
                ",\"spec\":{\"nodeName\":\"node-a\",\"schedulingGroup\":{\"podGroupName\":\"g\"},"
                    + "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":1,"
                    + "\"memory\":\"16Gi\"}}}],"
                    + "\"containers\":[{\"name\":\"c\",\"image\":\"cuda:12\",\"resources\":{\"limits\":"
                    + "{\"nvidia.com/gpumem\":\"3000\",\"cpu\":\"500m\"}}}]},"
                    + "\"status\":{\"phase\":\"Running\"}"));
    assertThat(v.key()).isEqualTo("ns/p");
    assertThat(v.uid()).isEqualTo("u-1");
    assertThat(v.labels()).isEqualTo(Map.of("l", "1"));
    assertThat(v.annotations()).isEqualTo(Map.of("a", "b"));
    assertThat(v.deleting()).isTrue();
    assertThat(v.podGroupName()).isEqualTo(Optional.of("g"));
    assertThat(v.phase()).isEqualTo(PodView.Phase.RUNNING);
    assertThat(v.nodeName()).contains("node-a");
    assertThat(v.initContainers().get(0).requests())
        .containsEntry("nvidia.com/gpu", BigDecimal.ONE)
        .containsEntry("memory", new BigDecimal(17179869184L));
    assertThat(v.containers().get(0).image()).isEqualTo("cuda:12");
    assertThat(v.containers().get(0).limits().get("cpu")).isEqualByComparingTo("0.5");
    assertThat(v.containers().get(0).limits().get("nvidia.com/gpumem"))
        .isEqualByComparingTo("3000");

    NodeView n =
        node(
            "{\"metadata\":{\"name\":\"node-a\",\"labels\":{\"gpu\":\"on\"},"
                + "\"annotations\":{\"hami.io/node-nvidia-register\":\"x\"}},"
                + "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"20\",\"cpu\":\"500m\",\"memory\":\"16Gi\"}}}");
    assertThat(n.name()).isEqualTo("node-a");
    assertThat(n.labels()).containsEntry("gpu", "on");
    assertThat(n.annotations()).containsEntry("hami.io/node-nvidia-register", "x");
    assertThat(n.allocatable().get("nvidia.com/gpu")).isEqualByComparingTo("20");
    assertThat(n.allocatable().get("cpu")).isEqualByComparingTo("0.5");
    assertThat(n.allocatable().get("memory")).isEqualByComparingTo("17179869184");
  }

  /** Inputs both old readers accepted, and what the one reader makes of them. */
  static Stream<Arguments> accepted() {
    return Stream.of(
        // absent / null parts read as empty (both readers)
        Arguments.of("only metadata", podJson("", ""), PodView.builder("ns", "p").build()),
        Arguments.of(
            "null annotations and labels",
            podJson(",\"annotations\":null,\"labels\":null", ""),
            PodView.builder("ns", "p").build()),
        Arguments.of(
            "null spec, status, containers",
            podJson("", ",\"spec\":{\"containers\":null,\"initContainers\":null},\"status\":null"),
            PodView.builder("ns", "p").build()),
        Arguments.of(
            "null entry in a map is absent (ObjectJson skipped it; KubeJson rejected it)",
            podJson(",\"annotations\":{\"a\":null,\"b\":\"1\"}", ""),
            PodView.builder("ns", "p").annotations(Map.of("b", "1")).build()),
        // unknown fields anywhere are ignored (kube-api-notes §4.2)
        Arguments.of(
            "unknown fields",
            podJson(
                ",\"managedFields\":[{\"x\":1}],\"futureField\":{}",
                ",\"spec\":{\"resourceClaims\":[{}],\"containers\":[{\"name\":\"c\",\"newThing\":true}]},"
                    + "\"status\":{\"phase\":\"Pending\",\"extra\":[1,2]},\"topLevelNew\":7"),
            PodView.builder("ns", "p")
                .containers(java.util.List.of(new ContainerView("c", "", Map.of(), Map.of())))
                .build()),
        Arguments.of(
            "unknown phase text is UNKNOWN",
            podJson("", ",\"status\":{\"phase\":\"Weird\"}"),
            PodView.builder("ns", "p").phase(PodView.Phase.UNKNOWN).build()),
        Arguments.of(
            "blank nodeName is unbound",
            podJson("", ",\"spec\":{\"nodeName\":\" \"}"),
            PodView.builder("ns", "p").build()),
        Arguments.of(
            "empty podGroupName is none",
            podJson("", ",\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"\"}}"),
            PodView.builder("ns", "p").build()),
        Arguments.of(
            "deletionTimestamp null is not deleting",
            podJson(",\"deletionTimestamp\":null", ""),
            PodView.builder("ns", "p").build()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("accepted")
  void acceptedInputs(String name, String json, PodView expected) throws Exception {
    assertThat(pod(json)).isEqualTo(expected);
  }

  /** kube-scheduler's PodPriority (0 when unset) and the core/v1 default preemption policy. */
  @Test
  void priorityAndPreemptionPolicy() throws Exception {
    PodView unset = pod(podJson("", ",\"spec\":{\"priority\":null,\"preemptionPolicy\":\"\"}"));
    assertThat(unset.priority()).isZero();
    assertThat(unset.preemptionPolicy()).isEqualTo("PreemptLowerPriority");
    PodView set =
        pod(podJson("", ",\"spec\":{\"priority\":-2147483648,\"preemptionPolicy\":\"Never\"}"));
    assertThat(set.priority()).isEqualTo(Integer.MIN_VALUE);
    assertThat(set.preemptionPolicy()).isEqualTo("Never");
    assertThat(set.toBuilder().build()).isEqualTo(set);
    for (String bad : new String[] {"\"1000\"", "1.5", "2147483648", "true"}) {
      assertThatThrownBy(() -> pod(podJson("", ",\"spec\":{\"priority\":" + bad + "}")))
          .isInstanceOf(MalformedObjectException.class)
          .hasMessageContaining("Pod.spec.priority")
          .hasMessageContaining(bad);
    }
  }

  /** kube-scheduler's failure handler: PodScheduled False with reason Unschedulable, only. */
  @Test
  void unschedulableIsThePodScheduledConditionFalseUnschedulable() throws Exception {
    String ready = "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"Unschedulable\"}";
    for (String[] c :
        new String[][] {
          {"", "false"},
          {ready, "false"},
          {"{\"type\":\"PodScheduled\",\"status\":\"True\"}", "false"},
          {
            "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"SchedulerError\"}",
            "false"
          },
          {
            ready
                + ",{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}",
            "true"
          },
        }) {
      PodView v = pod(podJson("", ",\"status\":{\"conditions\":[" + c[0] + "]}"));
      assertThat(v.unschedulable()).as(c[0]).isEqualTo(Boolean.parseBoolean(c[1]));
      assertThat(v.toBuilder().build()).isEqualTo(v);
    }
    assertThatThrownBy(() -> pod(podJson("", ",\"status\":{\"conditions\":[{\"type\":7}]}")))
        .isInstanceOf(MalformedObjectException.class)
        .hasMessageContaining("Pod.status.conditions[0].type");
  }

  @Test
  void numericAndHugeQuantities() throws Exception {
    NodeView n =
        node(
            "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{"
                + "\"a\":1,\"b\":0.5,\"c\":123456789012345678901234567890,\"d\":\"1e3\",\"e\":\"9223372036854775808Ki\","
                + "\"f\":null}}}");
    assertThat(n.allocatable().get("a")).isEqualByComparingTo("1");
    assertThat(n.allocatable().get("b")).isEqualByComparingTo("0.5");
    assertThat(n.allocatable().get("c")).isEqualByComparingTo("123456789012345678901234567890");
    assertThat(n.allocatable().get("d")).isEqualByComparingTo("1000");
    assertThat(n.allocatable().get("e"))
        .isEqualByComparingTo(
            new BigDecimal("9223372036854775808").multiply(BigDecimal.valueOf(1024)));
    assertThat(n.allocatable()).doesNotContainKey("f");
  }

  /** Inputs rejected, with the field path and the bad value the error must name. */
  static Stream<Arguments> rejected() {
    return Stream.of(
        // both readers rejected these
        Arguments.of(
            "pod without name", "{\"metadata\":{\"namespace\":\"ns\"}}", "Pod.metadata.name", ""),
        Arguments.of("pod without metadata", "{}", "Pod.metadata.name", ""),
        Arguments.of(
            "malformed limit (KubeJson case)",
            podJson(
                "",
                ",\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
                    + "{\"limits\":{\"nvidia.com/gpumem\":\"16Gx\"}}}]}"),
            "Pod.spec.containers[0].resources.limits[\"nvidia.com/gpumem\"]",
            "\"16Gx\""),
        Arguments.of(
            "restartPolicy not a string",
            podJson("", ",\"spec\":{\"initContainers\":[{\"name\":\"i\",\"restartPolicy\":1}]}"),
            "Pod.spec.initContainers[0].restartPolicy",
            "1"),
        Arguments.of(
            "malformed request of an init container",
            podJson(
                "",
                ",\"spec\":{\"initContainers\":[{\"name\":\"i\",\"resources\":"
                    + "{\"requests\":{\"memory\":\"12XB\"}}}]}"),
            "Pod.spec.initContainers[0].resources.requests[\"memory\"]",
            "\"12XB\""),
        Arguments.of(
            "quantity exponent out of range",
            podJson(
                "",
                ",\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
                    + "{\"limits\":{\"cpu\":\"1e400\"}}}]}"),
            "Pod.spec.containers[0].resources.limits[\"cpu\"]",
            "\"1e400\""),
        Arguments.of(
            "huge JSON number exponent",
            podJson(
                "",
                ",\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
                    + "{\"limits\":{\"cpu\":1e400}}}]}"),
            "Pod.spec.containers[0].resources.limits[\"cpu\"]",
            "1E+400"),
        Arguments.of(
            "quantity of the wrong JSON type",
            podJson(
                "",
                ",\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
                    + "{\"limits\":{\"cpu\":true}}}]}"),
            "Pod.spec.containers[0].resources.limits[\"cpu\"]",
            "true"),
        Arguments.of(
            "containers not an array",
            podJson("", ",\"spec\":{\"containers\":{}}"),
            "Pod.spec.containers",
            "{}"),
        // ObjectJson rejected, KubeJson accepted: a container needs a name (API validation)
        Arguments.of(
            "container without name",
            podJson("", ",\"spec\":{\"containers\":[{\"image\":\"x\"}]}"),
            "Pod.spec.containers[0].name",
            ""),
        // ObjectJson rejected, KubeJson defaulted to "default": rejected (see JsonViews)
        Arguments.of(
            "pod without namespace",
            "{\"metadata\":{\"name\":\"p\"}}",
            "Pod.metadata.namespace",
            ""),
        Arguments.of(
            "pod with empty namespace",
            "{\"metadata\":{\"name\":\"p\",\"namespace\":\"\"}}",
            "Pod.metadata.namespace",
            ""),
        // KubeJson rejected, ObjectJson coerced or ignored: a wrong JSON type is rejected (as Go)
        Arguments.of(
            "number as label value",
            podJson(",\"labels\":{\"x\":1}", ""),
            "Pod.metadata.labels[\"x\"]",
            "1"),
        Arguments.of(
            "object as annotation value",
            podJson(",\"annotations\":{\"x\":{\"y\":1}}", ""),
            "Pod.metadata.annotations[\"x\"]",
            "{\"y\":1}"),
        Arguments.of("metadata not an object", "{\"metadata\":\"p\"}", "Pod.metadata", "\"p\""),
        Arguments.of(
            "number as nodeName",
            podJson("", ",\"spec\":{\"nodeName\":5}"),
            "Pod.spec.nodeName",
            "5"),
        Arguments.of(
            "non-object container",
            podJson("", ",\"spec\":{\"containers\":[\"c\"]}"),
            "Pod.spec.containers[0]",
            "\"c\""),
        Arguments.of(
            "array as phase", podJson("", ",\"status\":{\"phase\":[]}"), "Pod.status.phase", "[]"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rejected")
  void rejectedInputsNameFieldAndValue(String name, String json, String field, String value) {
    assertThatThrownBy(() -> pod(json))
        .isInstanceOf(MalformedObjectException.class)
        .hasMessageContaining(field)
        .satisfies(
            e -> {
              MalformedObjectException m = (MalformedObjectException) e;
              assertThat(m.field()).isEqualTo(field);
              assertThat(m.value()).isEqualTo(value);
              if (!value.isEmpty()) {
                assertThat(m.getMessage()).contains(value);
              }
            });
  }

  @Test
  void badNodes() {
    assertThatThrownBy(() -> node("{\"metadata\":{}}"))
        .isInstanceOf(MalformedObjectException.class)
        .hasMessageStartingWith("Node.metadata.name");
    assertThatThrownBy(
            () ->
                node(
                    "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"x\"}}}"))
        .isInstanceOf(MalformedObjectException.class)
        .hasMessageContaining("Node.status.allocatable[\"cpu\"]")
        .hasMessageContaining("\"x\"");
    assertThatThrownBy(
            () -> node("{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":[]}}"))
        .isInstanceOf(MalformedObjectException.class)
        .hasMessageContaining("Node.status.allocatable");
    assertThatThrownBy(() -> JsonViews.nodeView(null))
        .isInstanceOf(MalformedObjectException.class)
        .hasMessageContaining("Node");
  }

  @Test
  void documentsThatAreNotOneObjectAreRejected() {
    for (String bad : new String[] {"", "[]", "{\"a\":1} {}", "{\"a\":", "null", "\"pod\""}) {
      assertThatThrownBy(() -> JsonViews.readObject(bad.getBytes(StandardCharsets.UTF_8)))
          .as(bad)
          .isInstanceOf(MalformedObjectException.class)
          .satisfies(e -> assertThat(((MalformedObjectException) e).field()).isEmpty());
    }
  }

  @Test
  void hugeBadValuesAreCutInTheMessage() {
    String big = "x".repeat(10_000);
    assertThatThrownBy(() -> pod(podJson(",\"labels\":{\"k\":[\"" + big + "\"]}", "")))
        .isInstanceOf(MalformedObjectException.class)
        .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(400).contains("10004 chars"));
  }
}
