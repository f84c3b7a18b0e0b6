package dev.hamilock.bind.testing;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.view.PodView;

/**
 * Falsification view ({@link ScenarioRunner.Builder#sidecarsSeenAsInit}): pods as the aggregation
 * before issue 23's fault 2 fix saw them, every init container run-to-completion (no {@code
 * restartPolicy: Always}).
 */
final class SidecarsAsInit {
  private SidecarsAsInit() {}

  static PodView view(PodView pod) {
    return pod.toBuilder()
        .initContainers(pod.initContainers().stream().map(c -> c.withRestartPolicy(null)).toList())
        .build();
  }

  private static ClusterPod pod(ClusterPod p) {
    return new ClusterPod(view(p.view()), p.nodeName(), p.resourceVersion());
  }

  static ClusterReader reader(ClusterReader reader) {
    return PortHooks.reader(reader, SidecarsAsInit::pod, node -> {});
  }
}
