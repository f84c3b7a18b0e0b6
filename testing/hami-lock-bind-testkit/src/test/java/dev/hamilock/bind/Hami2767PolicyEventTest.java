package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.testing.logs.LogCapture;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * HAMi#2767 where the flow has the pod: the extender filter ignores {@code binpak}, keeps the
 * configured default, carries the warning in its decision and records a Warning Event on the pod.
 */
class Hami2767PolicyEventTest {

  @Test
  void anUnknownPolicyWordIsIgnoredWithAWarningEventOnThePod() throws Exception {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    ClusterPod p =
        cluster.addPod(
            pod("w1", 1, 3000, 0).toBuilder()
                .annotations(Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, "binpak"))
                .build());
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY).writeAnnotations(cluster).build();

    FilterDecision d;
    try (LogCapture log = LogCapture.start()) {
      d = filter.filter(p.view(), List.of("n1"));
      assertThat(
              log.expect(
                  "WARN dev\\.hamilock\\.device\\.spi\\.fit\\.PodFitter - pod default/w1: ignoring"
                      + " unrecognized hami\\.io/gpu-scheduler-policy=\"binpak\" .*configured default"
                      + " \"spread\" used"))
          .as("the ignored word is logged once at WARN as well as carried in the decision")
          .hasSize(1);
    }

    assertThat(d.node()).contains("n1");
    assertThat(d.warnings())
        .singleElement()
        .satisfies(w -> assertThat(w.value()).isEqualTo("binpak"));
    assertThat(cluster.events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.namespace()).isEqualTo("default");
              assertThat(e.name()).isEqualTo("w1");
              assertThat(e.uid()).isEqualTo(p.view().uid());
              assertThat(e.reason()).isEqualTo("IgnoredAnnotation");
              assertThat(e.message())
                  .contains(
                      "hami.io/gpu-scheduler-policy",
                      "\"binpak\"",
                      "configured default \"spread\" used");
            });
  }

  @Test
  void aKnownWordRecordsNoEvent() throws Exception {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    ClusterPod p =
        cluster.addPod(
            pod("w1", 1, 3000, 0).toBuilder()
                .annotations(Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, " binpack "))
                .build());

    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .build()
            .filter(p.view(), List.of("n1"));

    assertThat(d.warnings()).isEmpty();
    assertThat(cluster.events()).isEmpty();
  }
}
