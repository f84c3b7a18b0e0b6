package dev.hamilock.device.spi;

import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * What a vendor's {@link DeviceVendor#fit} may read besides the devices and the request, with a
 * per-pod memo shared by all nodes of one filter call, so vendors parse pod annotations once.
 *
 * @param pod the pod being fitted
 * @param node the candidate node
 * @param policy device policy in effect for the pod
 * @param memo per-pod memo shared across nodes (thread-safe map), see {@link #newMemo()}; read it
 *     through {@link #podMemo}
 */
public record FitContext(PodView pod, NodeView node, GpuPolicy policy, Map<Object, Object> memo) {

  public FitContext {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(memo, "memo");
  }

  /** A fresh thread-safe memo map for one pod. */
  public static Map<Object, Object> newMemo() {
    return new ConcurrentHashMap<>();
  }

  /**
   * Computes a value from the pod once per pod (per filter call; {@code compute} must not return
   * null) and returns it afterwards; {@code key}: a private constant of the vendor.
   */
  @SuppressWarnings("unchecked")
  public <T> T podMemo(Object key, Function<PodView, T> compute) {
    return (T) memo.computeIfAbsent(key, k -> compute.apply(pod));
  }
}
