package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;
import static dev.hamilock.device.spi.HamiAnnotations.BIND_PHASE;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.ObservedValueRelease;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device plugin's side of the bind → Allocate hand-off for one vendor on one node (HAMi {@code
 * pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go} Allocate, {@code pkg/util/util.go}
 * GetPendingPod; spec §3).
 *
 * <ol>
 *   <li><b>Find the pod</b> (spec §3.1, decision table below): the one the node lock names; only a
 *       lock naming nobody falls back to HAMi's list rule.
 *   <li><b>Serve</b>: per kubelet container request, take the first non-empty entry of the vendor's
 *       to-allocate annotation (init containers first), check its device count ({@code device
 *       number not matched}), blank it, and write the list back ({@code A:;B:;} → {@code ;B:;};
 *       HAMi's own encoder would write {@code ;B:;;}, read the same).
 *   <li><b>Complete</b> (spec §3.3): no entry left ⇒ {@code hami.io/bind-phase: success} and the
 *       served pod's lock released by exact owner ({@link ObservedValueRelease} on the value that
 *       named it); a failure ⇒ {@code failed} and the same release; entries left ⇒ {@link
 *       HandoffResult.Status#PARTIAL}, lock kept.
 * </ol>
 *
 * <p><b>Decision table</b> (checked top to bottom; "served" = bind phase {@code success} or {@code
 * failed}, or a to-allocate list with no non-empty entry left):
 *
 * <table>
 *   <caption>Which pod one call serves</caption>
 *   <tr><th>Node lock</th><th>Pod state</th><th>Result</th><th>Writes / releases</th></tr>
 *   <tr><td>unreadable (backend error)</td><td>—</td><td>{@code ERROR}</td><td>nothing</td></tr>
 *   <tr><td rowspan="5">names owner O ({@code T,ns,name})</td><td>O not found (a dangling lock is
 *       the scheduler's to take over, spec §1.7)</td><td>{@code OWNER_NOT_READY}</td><td>nothing</td></tr>
 *   <tr><td>O has no {@code hami.io/vgpu-node} = node or no to-allocate annotation (locked, not yet
 *       annotated)</td><td>{@code OWNER_NOT_READY}</td><td>nothing</td></tr>
 *   <tr><td>O already served (a repeat call)</td><td>{@code NO_POD}</td><td>nothing</td></tr>
 *   <tr><td>O annotated but not bound here (kubelet calls Allocate for bound pods only)</td>
 *       <td>{@code OWNER_NOT_READY}</td><td>nothing</td></tr>
 *   <tr><td>O bound here with an entry left (or an undecodable list)</td><td>serve O: {@code
 *       COMPLETED}, {@code PARTIAL} or {@code FAILED}</td><td>O's annotations; O's lock released
 *       once on {@code COMPLETED}/{@code FAILED}</td></tr>
 *   <tr><td rowspan="2">absent, legacy ({@code T}), ownerless ({@code T,,}) or malformed</td>
 *       <td>the first pod P on the node ({@code spec.nodeName}) Pending, with {@code
 *       hami.io/bind-time}, phase {@code allocating}, {@code hami.io/vgpu-node} = node, not
 *       served</td><td>serve P ({@code FALLBACK_LIST}), as O</td><td>P's annotations; {@code
 *       release(node, P)}, which removes only P's lock, once on {@code COMPLETED}/{@code
 *       FAILED}</td></tr>
 *   <tr><td>no such pod</td><td>{@code NO_POD}</td><td>nothing</td></tr>
 * </table>
 *
 * <p>Stricter than HAMi, which serves the lock owner whatever its state (failing it), fails on a
 * malformed lock value, and lists pods in phase {@code success} or with nothing left: here a served
 * pod is never served twice and one pod's entries never go to another pod's Allocate. Every exit
 * releases at most one lock, the served pod's, once (HAMi#2214). Calls are serialized per instance,
 * as HAMi's plugin-wide mutex does; across instances (two plugin processes on a node) the
 * to-allocate write is conditioned on the pod's resourceVersion as read, so no entry is handed out
 * twice (a conflict looks again, up to 5 lookups). Never throws for cluster or data problems.
 */
public final class DevicePluginHandoff {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginHandoff.class);

  private final ClusterWriter writer;
  private final DeviceVendor vendor;
  private final NodeLock lock;
  private final HandoffLookup lookups;
  private final ReentrantLock mutex = new ReentrantLock();

  /** Lookups per call when the pod keeps changing between its read and the to-allocate write. */
  private static final int MAX_ATTEMPTS = 5;

  private DevicePluginHandoff(
      ClusterReader reader, ClusterWriter writer, DeviceVendor vendor, NodeLock lock) {
    Objects.requireNonNull(reader, "reader");
    this.writer = StackPorts.checked(null, Objects.requireNonNull(writer, "writer"));
    this.vendor = Objects.requireNonNull(vendor, "vendor");
    this.lock = Objects.requireNonNull(lock, "lock");
    this.lookups = new HandoffLookup(StackPorts.checked(reader, null), vendor, lock);
  }

  /**
   * @param lock the vendor's node lock ({@code hami.io/mutex.lock} for NVIDIA)
   * @throws NullPointerException naming a null argument
   */
  public static DevicePluginHandoff create(
      ClusterReader reader, ClusterWriter writer, DeviceVendor vendor, NodeLock lock) {
    return new DevicePluginHandoff(reader, writer, vendor, lock);
  }

  /**
   * One kubelet {@code Allocate} call: serves one container per count (kubelet's order).
   *
   * @throws NullPointerException for a null node or count list
   * @throws IllegalArgumentException for a blank node or an empty/negative count list
   */
  public HandoffResult allocate(String node, List<Integer> requestedDeviceCounts) {
    Objects.requireNonNull(requestedDeviceCounts, "requestedDeviceCounts");
    checkArgument(
        !requestedDeviceCounts.isEmpty()
            && requestedDeviceCounts.stream().allMatch(c -> c != null && c >= 0),
        "requestedDeviceCounts must be a non-empty list of counts >= 0: %s",
        requestedDeviceCounts);
    return serve(node, Optional.of(requestedDeviceCounts), Optional.empty());
  }

  /** Serves every pending container of the pod being allocated, each its entry's device count. */
  public HandoffResult allocateAll(String node) {
    return serve(node, Optional.empty(), Optional.empty());
  }

  /**
   * Reports that Allocate failed outside the hand-off (device health, mounts): the pod {@link
   * #allocate} would serve gets bind phase {@code failed} and its lock released once.
   *
   * @return {@link HandoffResult.Status#FAILED}, or OWNER_NOT_READY/NO_POD/ERROR (nothing written)
   */
  public HandoffResult fail(String node, String reason) {
    return serve(node, Optional.empty(), Optional.of(Objects.requireNonNull(reason, "reason")));
  }

  private HandoffResult serve(
      String node, Optional<List<Integer>> counts, Optional<String> injectedFailure) {
    requireNonBlank(node, "node");
    mutex.lock();
    try {
      for (int attempt = 1; ; attempt++) {
        HandoffLookup.Lookup lookup;
        try {
          lookup = lookups.find(node);
        } catch (ClusterException
            | LockBackendException
            | RuntimeException e) { // a NodeLock's bug too
          String reason =
              "cannot find the pod being allocated on node " + node + ": " + e.getMessage();
          return HandoffLookup.unserved(
              HandoffResult.Status.ERROR,
              Optional.empty(),
              reason,
              Optional.of(FlowFailure.of(reason, e, FlowFailure.Kind.UNAVAILABLE)));
        }
        if (lookup.found().isEmpty()) {
          LOG.debug("node {}: nothing served: {}", node, lookup.notServed().reason());
          return lookup.notServed();
        }
        HandoffLookup.Found found = lookup.found().get();
        if (injectedFailure.isPresent()) {
          return failed(
              node, found, FlowFailure.of(FlowFailure.Kind.REPORTED, injectedFailure.get()));
        }
        try {
          return serveFound(node, found, counts.orElse(null), attempt < MAX_ATTEMPTS);
        } catch (PodChanged e) { // another plugin process served it meanwhile: look again
          LOG.debug("node {}: pod {} changed since read; looking again", node, found.owner());
        }
      }
    } finally {
      mutex.unlock();
    }
  }

  /** The pod changed between its read and the write of its to-allocate list: nothing written. */
  private static final class PodChanged extends Exception {
    PodChanged() {
      super(null, null, false, false);
    }
  }

  /**
   * Serves {@code found}'s pending containers ({@code wanted}: kubelet's counts, null for all).
   *
   * @throws PodChanged if the pod changed since it was read and {@code mayRetry}
   */
  private HandoffResult serveFound(
      String node, HandoffLookup.Found found, List<Integer> wanted, boolean mayRetry)
      throws PodChanged {
    List<List<ContainerDevice>> entries;
    try {
      entries =
          new ArrayList<>(
              PodDevicesCodec.decode(
                  found.pod().annotations().get(vendor.toAllocateAnnotationKey())));
    } catch (DeviceAnnotationException e) {
      String why = "undecodable " + vendor.toAllocateAnnotationKey() + ": " + e.getMessage();
      return failed(node, found, FlowFailure.of(why, e, FlowFailure.Kind.INVALID_DATA));
    }
    List<ContainerAllocation> served = new ArrayList<>();
    int calls =
        wanted == null ? (int) entries.stream().filter(c -> !c.isEmpty()).count() : wanted.size();
    for (int r = 0; r < calls; r++) {
      int i = HandoffLookup.firstPending(entries);
      String invalid =
          i < 0
              ? "no pending container left in %s for request %d"
                  .formatted(vendor.toAllocateAnnotationKey(), r)
              : wanted != null && wanted.get(r) != entries.get(i).size()
                  ? "device number not matched: container %d was allocated %d device(s), kubelet requested %d"
                      .formatted(i, entries.get(i).size(), wanted.get(r))
                  : null;
      if (invalid != null) {
        return failed(node, found, FlowFailure.of(FlowFailure.Kind.INVALID_REQUEST, invalid));
      }
      List<ContainerDevice> entry = entries.get(i);
      served.add(new ContainerAllocation(i, entry));
      entries.set(i, List.of());
    }
    boolean complete = HandoffLookup.firstPending(entries) < 0;
    Optional<FlowFailure> none = Optional.empty();
    MetadataPatch.Builder patch =
        MetadataPatch.builder()
            .expectedUid(found.pod().uid())
            .expectedResourceVersion(found.stored().resourceVersion())
            .setAnnotation(vendor.toAllocateAnnotationKey(), PodDevicesCodec.encode(entries));
    if (complete) {
      patch.setAnnotation(BIND_PHASE, AllocationAnnotations.PHASE_SUCCESS);
    }
    try {
      writer.patchPodMetadata(found.pod().namespace(), found.pod().name(), patch.build());
    } catch (ClusterException e) {
      if (mayRetry && e.kind() == ClusterException.Kind.CONFLICT) {
        throw new PodChanged();
      }
      String why = "cannot mark containers allocated: " + e.getMessage();
      return failed(node, found, FlowFailure.of(why, e, FlowFailure.Kind.UNAVAILABLE));
    }
    return complete
        ? found.result(HandoffResult.Status.COMPLETED, served, release(node, found), "", none)
        : found.result(HandoffResult.Status.PARTIAL, served, false, "", none);
  }

  /** Bind phase {@code failed}, lock released ({@link Uninterrupted}, as {@link #release}). */
  private HandoffResult failed(String node, HandoffLookup.Found found, FlowFailure failure) {
    return Uninterrupted.call(() -> failedNow(node, found, failure));
  }

  private HandoffResult failedNow(String node, HandoffLookup.Found found, FlowFailure failure) {
    String reason = failure.message();
    LOG.debug("node {}: allocation for pod {} failed: {}", node, found.owner(), reason);
    try {
      writer.patchPodMetadata(
          found.pod().namespace(),
          found.pod().name(),
          MetadataPatch.builder()
              .expectedUid(found.pod().uid())
              .setAnnotation(BIND_PHASE, AllocationAnnotations.PHASE_FAILED)
              .build());
    } catch (ClusterException e) {
      String why = "node {}: cannot set bind phase failed on pod {}: {}";
      LOG.warn(why, node, found.owner(), e.getMessage());
    }
    return found.result(
        HandoffResult.Status.FAILED, List.of(), release(node, found), reason, Optional.of(failure));
  }

  /**
   * Releases the served pod's lock: compare-and-delete on the value that named it, else by owner;
   * {@link Uninterrupted}, as an Allocate interrupted at its deadline must still release.
   */
  private boolean release(String node, HandoffLookup.Found found) {
    return Uninterrupted.call(
        () -> {
          try {
            Optional<ObservedValueRelease> byValue = lock.observedValueRelease();
            return found.observedLockValue().isPresent() && byValue.isPresent()
                ? byValue.get().release(node, found.owner(), found.observedLockValue().get())
                : lock.release(node, found.owner());
          } catch (LockBackendException | RuntimeException e) { // a store's bug: the lock expires
            String why = "node {}: cannot release lock {} of pod {}: {}";
            LOG.warn(why, node, lock.key(), found.owner(), e.getMessage());
            return false;
          }
        });
  }
}
