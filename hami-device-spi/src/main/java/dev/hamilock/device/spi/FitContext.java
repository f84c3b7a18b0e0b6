package dev.hamilock.device.spi;

import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * What a vendor's {@link DeviceVendor#fit} may read besides the devices and the request.
 *
 * @param memo per-pod memo shared across the nodes of one filter call ({@link #newMemo()}), read
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
