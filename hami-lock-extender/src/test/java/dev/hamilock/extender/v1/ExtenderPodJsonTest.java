package dev.hamilock.extender.v1;

import static dev.hamilock.extender.v1.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

/**
 * The Pod and Node of extender payloads, as {@link ExtenderJson} parses them, read by the one
 * Pod/Node reader ({@link JsonViews}; its full case table is hami-device-spi's JsonViewsTest).
 */
class ExtenderPodJsonTest {

  @Test
  void guideGangMemberBecomesAPodView() throws Exception {
    JsonNode pod = ExtenderJson.readTree(Fixtures.bytes("guide-gang-worker-1.pod.json"));
    PodView v = JsonViews.podView(pod);
    assertThat(v.key()).isEqualTo("default/gang-worker-1");
    assertThat(v.uid()).isEqualTo("7d3c1f0e-5b8a-4c52-9e61-0a4f2b9d8c11");
    assertThat(v.labels()).containsEntry("scheduling.x-k8s.io/pod-group", "gang-training");
    assertThat(v.phase()).isEqualTo(PodView.Phase.PENDING);
    assertThat(v.deleting()).isFalse();
    assertThat(v.podGroupName()).isEmpty();
    assertThat(v.initContainers()).isEmpty();
    assertThat(v.containers()).hasSize(1);
    assertThat(v.containers().get(0).name()).isEqualTo("worker");
    assertThat(v.containers().get(0).image()).isEqualTo("ubuntu:22.04");
    assertThat(v.containers().get(0).limitOrRequest("nvidia.com/gpumem"))
        .map(BigDecimal::intValueExact)
        .contains(3000);
    assertThat(v.containers().get(0).limitOrRequest("nvidia.com/gpucores"))
        .map(BigDecimal::intValueExact)
        .contains(30);
  }

  @Test
  void extenderTreesKeepDecimalsExact() throws Exception {
    // ExtenderJson parses floats as BigDecimal: a numeric quantity is not rounded through double
    NodeView n =
        JsonViews.nodeView(
            ExtenderJson.readTree(
                utf8(
                    "{\"metadata\":{\"name\":\"n\"},"
                        + "\"status\":{\"allocatable\":{\"cpu\":0.1000000000000000055511151231257827}}}")));
    assertThat(n.allocatable().get("cpu"))
        .isEqualByComparingTo("0.1000000000000000055511151231257827");
  }

  @Test
  void aPodWithoutNamespaceIsRejectedNotDefaulted() {
    assertThatThrownBy(
            () -> JsonViews.podView(ExtenderJson.readTree(utf8("{\"metadata\":{\"name\":\"p\"}}"))))
        .isInstanceOf(MalformedObjectException.class)
        .hasMessageContaining("Pod.metadata.namespace")
        .satisfies(
            e ->
                assertThat(((MalformedObjectException) e).field())
                    .isEqualTo("Pod.metadata.namespace"));
  }
}
