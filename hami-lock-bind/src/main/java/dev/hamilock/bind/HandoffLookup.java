package dev.hamilock.bind;

import static dev.hamilock.device.spi.HamiAnnotations.BIND_PHASE;
import static dev.hamilock.device.spi.HamiAnnotations.BIND_TIME;
import static dev.hamilock.device.spi.HamiAnnotations.VGPU_NODE;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 1 of {@link DevicePluginHandoff}: which pod one call serves, by the decision table of its
 * class Javadoc (HAMi {@code pkg/util/util.go} GetPendingPod, spec §3.1). Reads only; logs under
 * {@code DevicePluginHandoff}'s name.
 */
final class HandoffLookup {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginHandoff.class);

  private final ClusterReader reader;
  private final DeviceVendor vendor;
  private final NodeLock lock;

  HandoffLookup(ClusterReader reader, DeviceVendor vendor, NodeLock lock) {
    this.reader = reader;
    this.vendor = vendor;
    this.lock = lock;
  }

  /** Applies the decision table of the class Javadoc: a pod to serve, or why there is none. */
  Lookup find(String node) throws ClusterException, LockBackendException {
    Optional<String> value = lock.readValue(node);
    Optional<LockOwner> named = value.isEmpty() ? Optional.empty() : namedOwner(node, value.get());
    return named.isPresent() ? fromOwner(node, named.get(), value.get()) : fromList(node);
  }

  /** The owner the node lock value names; empty when legacy, ownerless or malformed. */
  private static Optional<LockOwner> namedOwner(String node, String value) {
    try {
      return LockRecordCodec.parse(value).owner();
    } catch (MalformedLockException e) {
      LOG.debug("node {}: lock value {} is malformed; using the fallback list", node, e.value());
      return Optional.empty();
    }
  }

  private Lookup fromOwner(String node, LockOwner named, String lockValue) throws ClusterException {
    Optional<ClusterPod> read = reader.readPod(named.namespace(), named.name());
    if (read.isEmpty()) {
      return Lookup.notReady(named, "lock owner " + named + " of node " + node + " not found");
    }
    ClusterPod pod = read.get();
    PodView v = pod.view();
    LockOwner owner = BindCall.Subject.ownerOf(v);
    String assigned = v.annotations().get(VGPU_NODE);
    String toAllocate = v.annotations().get(vendor.toAllocateAnnotationKey());
    if (!node.equals(assigned) || toAllocate == null) {
      String has = toAllocate == null ? "absent" : "present";
      return Lookup.notReady(
          owner,
          "lock owner %s has no allocation for node %s yet (%s=%s, %s %s)"
              .formatted(owner, node, VGPU_NODE, assigned, vendor.toAllocateAnnotationKey(), has));
    }
    if (served(v)) {
      return Lookup.nobody(
          "no binding pod found on node %s: lock owner %s was already served (bind phase %s)"
              .formatted(node, owner, v.annotations().get(BIND_PHASE)));
    }
    if (!pod.nodeName().equals(Optional.of(node))) {
      return Lookup.notReady(
          owner,
          "lock owner %s is not bound to node %s yet (spec.nodeName=%s)"
              .formatted(owner, node, pod.nodeName().orElse("")));
    }
    return Lookup.serve(
        new Found(pod, owner, HandoffResult.FoundBy.LOCK_OWNER, Optional.of(lockValue)));
  }

  private Lookup fromList(String node) throws ClusterException {
    for (ClusterPod p : reader.listPodsOnNode(node)) {
      PodView v = p.view();
      if (v.phase() == PodView.Phase.PENDING
          && p.nodeName().equals(Optional.of(node))
          && v.annotations().containsKey(BIND_TIME)
          && AllocationAnnotations.PHASE_ALLOCATING.equals(v.annotations().get(BIND_PHASE))
          && node.equals(v.annotations().get(VGPU_NODE))
          && v.annotations().containsKey(vendor.toAllocateAnnotationKey())
          && !served(v)) {
        return Lookup.serve(
            new Found(
                p,
                BindCall.Subject.ownerOf(v),
                HandoffResult.FoundBy.FALLBACK_LIST,
                Optional.empty()));
      }
    }
    return Lookup.nobody("no binding pod found on node " + node);
  }

  /** Phase {@code success}/{@code failed}, or nothing left (undecodable: served, failing). */
  private boolean served(PodView pod) {
    String phase = pod.annotations().get(BIND_PHASE);
    if (AllocationAnnotations.PHASE_SUCCESS.equals(phase)
        || AllocationAnnotations.PHASE_FAILED.equals(phase)) {
      return true;
    }
    if (phase != null && !PolicyValues.BIND_PHASE_WORDS.contains(phase)) {
      String expected = "one of " + String.join(", ", PolicyValues.BIND_PHASE_WORDS);
      String effect = "not in any phase: never served as allocating";
      LOG.warn(
          "{}", new AnnotationWarning(pod.key(), BIND_PHASE, phase, expected, effect).message());
    }
    String v = pod.annotations().get(vendor.toAllocateAnnotationKey());
    if (v == null) {
      return true;
    }
    try {
      return firstPending(PodDevicesCodec.decode(v)) < 0;
    } catch (DeviceAnnotationException e) {
      return false;
    }
  }

  static int firstPending(List<List<ContainerDevice>> entries) {
    return IntStream.range(0, entries.size())
        .filter(i -> !entries.get(i).isEmpty())
        .findFirst()
        .orElse(-1);
  }

  /**
   * The pod to serve as read (its resourceVersion the to-allocate write's precondition) and the
   * lock value that named it (empty when found by the list rule).
   */
  record Found(
      ClusterPod stored,
      LockOwner owner,
      HandoffResult.FoundBy by,
      Optional<String> observedLockValue) {
    PodView pod() {
      return stored.view();
    }

    HandoffResult result(
        HandoffResult.Status status,
        List<ContainerAllocation> served,
        boolean released,
        String r,
        Optional<FlowFailure> failure) {
      return new HandoffResult(
          status, Optional.of(owner), Optional.of(by), served, released, r, failure);
    }
  }

  /** Either a pod to serve, or the result to report when there is none. */
  record Lookup(Optional<Found> found, HandoffResult notServed) {
    static Lookup serve(Found f) {
      return new Lookup(Optional.of(f), null);
    }

    static Lookup notReady(LockOwner owner, String reason) {
      return new Lookup(
          Optional.empty(),
          unserved(
              HandoffResult.Status.OWNER_NOT_READY, Optional.of(owner), reason, Optional.empty()));
    }

    static Lookup nobody(String reason) {
      return new Lookup(
          Optional.empty(),
          unserved(HandoffResult.Status.NO_POD, Optional.empty(), reason, Optional.empty()));
    }
  }

  /** A result serving nobody; {@code owner} is the lock owner that named the pod, if any. */
  static HandoffResult unserved(
      HandoffResult.Status status,
      Optional<LockOwner> owner,
      String reason,
      Optional<FlowFailure> failure) {
    return new HandoffResult(
        status,
        owner,
        owner.map(o -> HandoffResult.FoundBy.LOCK_OWNER),
        List.of(),
        false,
        reason,
        failure);
  }
}
