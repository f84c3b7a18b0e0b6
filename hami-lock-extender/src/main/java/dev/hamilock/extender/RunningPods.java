package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.device.spi.preempt.RunningPod;
import java.util.List;

/**
 * Where the preempt verb learns the pods the {@link
 * dev.hamilock.device.spi.preempt.PreemptionPlanner} weighs: every placed pod with its priority and
 * start time. Over Kubernetes: the pod informer's cache, as kube-scheduler's preemption reads its
 * snapshot.
 */
@FunctionalInterface
public interface RunningPods {
  /**
   * @return every pod bound to a node or allocated on one ({@code hami.io/vgpu-node}), with its
   *     HAMi allocation annotations; each pod once
   * @throws ClusterException if the pods cannot be read
   */
  List<RunningPod> all() throws ClusterException;
}
