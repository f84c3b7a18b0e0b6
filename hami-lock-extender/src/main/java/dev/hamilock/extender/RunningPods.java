package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.device.spi.preempt.RunningPod;
import java.util.List;

/** The placed pods the preempt verb weighs, e.g. from an informer cache (as kube-scheduler). */
@FunctionalInterface
public interface RunningPods {
  /**
   * @return every pod bound to a node or allocated on one ({@code hami.io/vgpu-node}), with its
   *     HAMi allocation annotations; each pod once
   * @throws ClusterException if the pods cannot be read
   */
  List<RunningPod> all() throws ClusterException;
}
