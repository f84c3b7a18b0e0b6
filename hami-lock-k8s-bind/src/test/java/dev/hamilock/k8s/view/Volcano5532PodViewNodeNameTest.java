package dev.hamilock.k8s.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.device.spi.view.PodView;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * volcano#5532: usage counts on {@code spec.nodeName} for a bound pod, so the client-java view must
 * carry it (empty while unbound).
 */
class Volcano5532PodViewNodeNameTest {

  @Test
  void theViewCarriesSpecNodeName() {
    V1Pod bound =
        new V1Pod()
            .metadata(
                new V1ObjectMeta()
                    .namespace("ns")
                    .name("w")
                    .annotations(Map.of("hami.io/vgpu-node", "n1")))
            .spec(new V1PodSpec().nodeName("n2"));
    PodView v = KubernetesViews.podView(bound);
    assertThat(v.nodeName()).contains("n2");
    assertThat(v.annotations()).containsEntry("hami.io/vgpu-node", "n1");

    assertThat(
            KubernetesViews.podView(
                    new V1Pod()
                        .metadata(new V1ObjectMeta().namespace("ns").name("u"))
                        .spec(new V1PodSpec()))
                .nodeName())
        .isEmpty();
    assertThat(
            KubernetesViews.podView(
                    new V1Pod()
                        .metadata(new V1ObjectMeta().namespace("ns").name("u"))
                        .spec(new V1PodSpec().nodeName("")))
                .nodeName())
        .isEmpty();
  }
}
