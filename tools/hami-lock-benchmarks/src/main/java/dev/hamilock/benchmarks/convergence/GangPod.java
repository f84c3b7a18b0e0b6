package dev.hamilock.benchmarks.convergence;

import dev.hamilock.core.LockOwner;
import io.kubernetes.client.openapi.models.V1Pod;
import java.util.Objects;

/**
 * One gang member as every algorithm sees it: the pod object (for HAMi's algorithms, which take a
 * {@link V1Pod}) and its lock owner identity (for this library).
 *
 * @param pod the pod as created in the emulator (namespace, name, uid, pod-group label, {@code
 *     nvidia.com/gpu: 1} limit)
 * @param owner the pod's lock owner (namespace, name, uid)
 */
public record GangPod(V1Pod pod, LockOwner owner) {
  /**
   * @throws NullPointerException if a component is null
   */
  public GangPod {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(owner, "owner");
  }

  public String namespace() {
    return owner.namespace();
  }

  public String name() {
    return owner.name();
  }
}
