package dev.hamilock.reference;

import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1ResourceRequirements;
import java.math.BigDecimal;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * HAMi's NVIDIA vendor lock methods ({@code pkg/device/nvidia/device.go} {@code LockNode} / {@code
 * ReleaseNodeLock}, spec §5.3, §5.6): lock or owner-checked release of {@code hami.io/mutex.lock}
 * through {@link HamiNodeLock} only when some <em>regular</em> container (init containers ignored)
 * yields a request with a positive device count.
 *
 * <p>Request rule (the part of {@code GenerateResourceRequests} that decides the count): the count
 * resource from limits, else requests, must be an exact integer; if the memory resource is present
 * (limits, else requests) it must be an exact integer in [0, 2147483647 / memoryFactor], otherwise
 * the whole request is dropped (e.g. {@code 16Gi}).
 */
public final class NvidiaVendorLock implements VendorLock {

  /** HAMi's vendor key ({@code CommonWord}). */
  public static final String VENDOR = "NVIDIA";

  /** Default count resource name. */
  public static final String DEFAULT_COUNT_RESOURCE = "nvidia.com/gpu";

  /** Default memory resource name (MiB). */
  public static final String DEFAULT_MEMORY_RESOURCE = "nvidia.com/gpumem";

  private final HamiNodeLock nodeLock;
  private final String countResource;
  private final String memoryResource;
  private final int memoryFactor;

  /**
   * NVIDIA with HAMi's chart defaults ({@code nvidia.com/gpu}, {@code nvidia.com/gpumem}, factor
   * 1).
   *
   * @param nodeLock the lock implementation
   * @throws NullPointerException if {@code nodeLock} is null
   */
  public NvidiaVendorLock(HamiNodeLock nodeLock) {
    this(nodeLock, DEFAULT_COUNT_RESOURCE, DEFAULT_MEMORY_RESOURCE, 1);
  }

  /**
   * @param nodeLock the lock implementation
   * @param countResource device-count resource name
   * @param memoryResource memory resource name (MiB)
   * @param memoryFactor HAMi's MemoryFactor; values ≤ 1 mean 1
   * @throws NullPointerException if any reference argument is null
   * @throws IllegalArgumentException if a name is empty
   */
  public NvidiaVendorLock(
      HamiNodeLock nodeLock, String countResource, String memoryResource, int memoryFactor) {
    Objects.requireNonNull(nodeLock, "nodeLock");
    HamiNodeLock.requireArg(countResource, "countResource");
    HamiNodeLock.requireArg(memoryResource, "memoryResource");
    this.nodeLock = nodeLock;
    this.countResource = countResource;
    this.memoryResource = memoryResource;
    this.memoryFactor = Math.max(1, memoryFactor);
  }

  /** {@inheritDoc} Locks only if {@link #requestsDevices(V1Pod)}. */
  @Override
  public void lockNode(String node, V1Pod pod) throws ApiException, HamiException {
    if (!requestsDevices(pod)) {
      return;
    }
    nodeLock.lockNode(node, namespace(pod), name(pod));
  }

  /** {@inheritDoc} Releases (owner-checked) only if {@link #requestsDevices(V1Pod)}. */
  @Override
  public void releaseNodeLock(String node, V1Pod pod) throws ApiException, HamiException {
    if (!requestsDevices(pod)) {
      return;
    }
    nodeLock.releaseNodeLock(node, namespace(pod), name(pod), false);
  }

  /**
   * HAMi's locking predicate: some regular container's request has a positive count.
   *
   * @param pod the pod, may be {@code null} (then {@code false})
   * @return whether NVIDIA would lock for this pod
   */
  public boolean requestsDevices(V1Pod pod) {
    if (pod == null || pod.getSpec() == null || pod.getSpec().getContainers() == null) {
      return false;
    }
    for (V1Container container : pod.getSpec().getContainers()) {
      if (deviceCount(container) > 0) {
        return true;
      }
    }
    return false;
  }

  private long deviceCount(V1Container container) {
    V1ResourceRequirements resources = container.getResources();
    if (resources == null) {
      return 0;
    }
    Optional<Quantity> count = lookup(resources, countResource);
    if (count.isEmpty()) {
      return 0;
    }
    Optional<Long> n = exactLong(count.get());
    if (n.isEmpty()) {
      return 0;
    }
    Optional<Quantity> memory = lookup(resources, memoryResource);
    if (memory.isPresent()) {
      Optional<Long> mem = exactLong(memory.get());
      if (mem.isEmpty() || mem.get() < 0 || mem.get() > Integer.MAX_VALUE / memoryFactor) {
        return 0;
      }
    }
    return n.get();
  }

  private static Optional<Quantity> lookup(V1ResourceRequirements resources, String name) {
    Map<String, Quantity> limits = resources.getLimits();
    if (limits != null && limits.containsKey(name)) {
      return Optional.ofNullable(limits.get(name));
    }
    Map<String, Quantity> requests = resources.getRequests();
    if (requests != null && requests.containsKey(name)) {
      return Optional.ofNullable(requests.get(name));
    }
    return Optional.empty();
  }

  /** Go's {@code Quantity.AsInt64()}: the value if it is an exact integer fitting int64. */
  private static Optional<Long> exactLong(Quantity q) {
    BigDecimal number = q.getNumber();
    if (number == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(number.longValueExact());
    } catch (ArithmeticException notExact) {
      return Optional.empty();
    }
  }

  private static String namespace(V1Pod pod) {
    return pod.getMetadata() == null ? null : pod.getMetadata().getNamespace();
  }

  private static String name(V1Pod pod) {
    return pod.getMetadata() == null ? null : pod.getMetadata().getName();
  }

  @Override
  public String toString() {
    return "NvidiaVendorLock["
        + countResource
        + ", "
        + memoryResource
        + ", factor "
        + memoryFactor
        + "]";
  }
}
