package dev.hamilock.extender.v1;

import static dev.hamilock.extender.v1.Fixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class KubeJsonTest {

  @Test
  void guideGangMemberBecomesAPodView() throws Exception {
    JsonNode pod = ExtenderJson.readTree(Fixtures.bytes("guide-gang-worker-1.pod.json"));
    PodView v = KubeJson.podView(pod);
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
        .map(BigDecimal::intValueExact).contains(3000);
    assertThat(v.containers().get(0).limitOrRequest("nvidia.com/gpucores"))
        .map(BigDecimal::intValueExact).contains(30);
  }

  @Test
  void readsSchedulingGroupDeletionAndNumericQuantities() throws Exception {
    PodView v = KubeJson.podView(ExtenderJson.readTree(utf8("{\"metadata\":{\"name\":\"p\","
        + "\"deletionTimestamp\":\"2026-08-01T06:00:00Z\",\"annotations\":{\"a\":\"b\"}},"
        + "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"g\"},\"initContainers\":[{\"name\":\"i\","
        + "\"resources\":{\"requests\":{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\"}}}]},"
        + "\"status\":{\"phase\":\"Running\"}}")));
    assertThat(v.namespace()).isEqualTo("default");
    assertThat(v.deleting()).isTrue();
    assertThat(v.podGroupName()).isEqualTo(Optional.of("g"));
    assertThat(v.phase()).isEqualTo(PodView.Phase.RUNNING);
    assertThat(v.annotations()).isEqualTo(Map.of("a", "b"));
    assertThat(v.initContainers().get(0).requests())
        .containsEntry("nvidia.com/gpu", BigDecimal.ONE)
        .containsEntry("memory", new BigDecimal(17179869184L));
  }

  @Test
  void badPodsAreRejectedNamingTheField() {
    assertThatThrownBy(() -> KubeJson.podView(ExtenderJson.readTree(utf8("{\"metadata\":{}}"))))
        .isInstanceOf(ExtenderJsonException.class).hasMessageContaining("Pod.metadata.name");
    assertThatThrownBy(() -> KubeJson.podView(ExtenderJson.readTree(utf8(
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
            + "{\"limits\":{\"nvidia.com/gpumem\":\"16Gx\"}}}]}}"))))
        .isInstanceOf(ExtenderJsonException.class)
        .hasMessageContaining("Pod.spec.containers[0].resources")
        .hasMessageContaining("16Gx");
    assertThatThrownBy(() -> KubeJson.podView(ExtenderJson.readTree(utf8(
        "{\"metadata\":{\"name\":\"p\",\"labels\":{\"x\":1}}}"))))
        .isInstanceOf(ExtenderJsonException.class).hasMessageContaining("Pod.metadata.labels[\"x\"]");
    assertThatThrownBy(() -> KubeJson.podView(ExtenderJson.readTree(utf8(
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":{}}}"))))
        .isInstanceOf(ExtenderJsonException.class).hasMessageContaining("Pod.spec.containers");
  }

  @Test
  void nodeObjectsBecomeNodeViews() throws Exception {
    String reg = Fixtures.text("F-03-register-2xa40.value");
    NodeView n = KubeJson.nodeView(ExtenderJson.readTree(utf8("{\"metadata\":{\"name\":\"node-a\","
        + "\"labels\":{\"gpu\":\"on\"},\"annotations\":{\"hami.io/node-nvidia-register\":\""
        + reg + "\"}},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"20\",\"cpu\":\"500m\"}}}")));
    assertThat(n.name()).isEqualTo("node-a");
    assertThat(n.labels()).containsEntry("gpu", "on");
    assertThat(n.annotations()).containsEntry("hami.io/node-nvidia-register", reg);
    assertThat(n.allocatable().get("nvidia.com/gpu")).isEqualByComparingTo("20");
    assertThat(n.allocatable().get("cpu")).isEqualByComparingTo("0.5");
    assertThatThrownBy(() -> KubeJson.nodeView(ExtenderJson.readTree(utf8(
        "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"x\"}}}"))))
        .isInstanceOf(ExtenderJsonException.class).hasMessageContaining("Node.status.allocatable[\"cpu\"]");
  }
}
