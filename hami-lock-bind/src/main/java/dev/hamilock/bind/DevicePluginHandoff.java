package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.ObservedValueRelease;
import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device plugin's side of the bind → Allocate hand-off for one vendor on one node (HAMi {@code
 * pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go} Allocate and {@code util.go}, {@code
 * pkg/util/util.go} GetPendingPod; spec §3). For Java device plugins, and to simulate HAMi's plugin
 * in tests.
 *
 * <ol>
 *   <li><b>Find the pod</b> (spec §3.1, decision table below): the pod named by the node lock if
 *       the lock names one; only a lock that names nobody falls back to HAMi's list rule.
 *   <li><b>Serve</b>: decode the vendor's to-allocate annotation per container; for each kubelet
 *       container request take the first non-empty entry (init containers first), check the device
 *       count ({@code device number not matched}), blank it, and write the re-encoded list back
 *       (one {@code ;} per container: {@code A:;B:;} → {@code ;B:;}; HAMi's own decoder adds one
 *       trailing empty container, so its text would be {@code ;B:;;} — both read the same).
 *   <li><b>Complete</b> (spec §3.3): no entry left ⇒ {@code hami.io/bind-phase: success} and
 *       release the served pod's node lock by exact owner — when the pod was found through the
 *       lock, with one compare-and-delete on the lock value read in step 1 ({@link
 *       ObservedValueRelease#release(String, LockOwner, String)}). Any failure ⇒ {@code
 *       hami.io/bind-phase: failed} and the same release. Entries left ⇒ {@link
 *       HandoffResult.Status#PARTIAL}, the lock stays for the next Allocate call.
 * </ol>
 *
 * <p><b>Decision table</b> (checked top to bottom; "served" = bind phase {@code success} or {@code
 * failed}, or a to-allocate list with no non-empty entry left):
 *
 * <table>
 *   <caption>Which pod one call serves</caption>
 *   <tr><th>Node lock</th><th>Pod state</th><th>Result</th><th>Writes / releases</th></tr>
 *   <tr><td>unreadable (backend error)</td><td>—</td><td>{@code ERROR}</td><td>nothing</td></tr>
 *   <tr><td rowspan="5">names owner O ({@code T,ns,name})</td><td>O not found</td>
 *       <td>{@code OWNER_NOT_READY}</td><td>nothing (a dangling lock is the scheduler's to take over,
 *       spec §1.7)</td></tr>
 *   <tr><td>O has no {@code hami.io/vgpu-node} = this node or no to-allocate annotation (its
 *       binder has locked but not yet annotated)</td><td>{@code OWNER_NOT_READY}</td><td>nothing</td></tr>
 *   <tr><td>O already served</td><td>{@code NO_POD}</td><td>nothing (a repeat call; if the serving
 *       call's release failed, the lock is left to expiry)</td></tr>
 *   <tr><td>O annotated but {@code spec.nodeName} ≠ this node (not bound yet: kubelet only calls
 *       Allocate for bound pods, so the pod being admitted is not O)</td><td>{@code OWNER_NOT_READY}</td>
 *       <td>nothing</td></tr>
 *   <tr><td>O bound here with an entry left (or an undecodable list)</td>
 *       <td>serve O: {@code COMPLETED}, {@code PARTIAL} or {@code FAILED}</td>
 *       <td>O's annotations; O's lock released once on {@code COMPLETED}/{@code FAILED}</td></tr>
 *   <tr><td rowspan="2">absent, legacy ({@code T}), ownerless ({@code T,,}) or malformed</td>
 *       <td>some pod P listed on the node ({@code spec.nodeName}) is Pending, has
 *       {@code hami.io/bind-time}, bind phase {@code allocating}, {@code hami.io/vgpu-node} = node
 *       and is not served (the first such in list order)</td>
 *       <td>serve P (found by {@code FALLBACK_LIST}): {@code COMPLETED}, {@code PARTIAL} or
 *       {@code FAILED}</td>
 *       <td>P's annotations; {@code release(node, P)} once on {@code COMPLETED}/{@code FAILED},
 *       which removes nothing unless P holds the lock (legacy, ownerless and malformed values
 *       are left for their writer, expiry or takeover)</td></tr>
 *   <tr><td>no such pod</td><td>{@code NO_POD}</td><td>nothing</td></tr>
 * </table>
 *
 * <p>Differences from HAMi, all stricter: HAMi serves the lock owner whatever its state (an
 * unannotated or unbound owner makes HAMi's Allocate fail, mark the owner {@code failed} and
 * release its lock — here nothing happens until the owner is ready), fails Allocate on a malformed
 * lock value (here: fallback), and its list rule also accepts bind phase {@code success} and pods
 * with nothing left to allocate (here they are skipped, so a served pod is never served twice and
 * one pod's entries are never handed to another pod's Allocate).
 *
 * <p>Consequently every exit path releases at most one lock — the served pod's, exactly once, when
 * its hand-off completes or fails (HAMi#2214); a call that serves nobody writes and releases
 * nothing. Calling again for a served pod finds nothing ({@link HandoffResult.Status#NO_POD}).
 * {@link #fail} follows the same table, so it never marks a pod other than the one it would serve.
 * Calls are serialized per instance, as HAMi's plugin-wide mutex does. Never throws for cluster or
 * data problems.
 */
public final class DevicePluginHandoff {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginHandoff.class);

  private final ClusterReader reader;
  private final ClusterWriter writer;
  private final DeviceVendor vendor;
  private final NodeLock lock;
  private final ReentrantLock mutex = new ReentrantLock();

  private DevicePluginHandoff(
      ClusterReader reader, ClusterWriter writer, DeviceVendor vendor, NodeLock lock) {
    this.reader = reader;
    this.writer = writer;
    this.vendor = vendor;
    this.lock = lock;
  }

  /**
   * @param reader fresh reads
   * @param writer pod patches
   * @param vendor the plugin's vendor (its to-allocate key)
   * @param lock the vendor's node lock ({@code hami.io/mutex.lock} for NVIDIA)
   * @return the hand-off
   * @throws NullPointerException naming a null argument
   */
  public static DevicePluginHandoff create(
      ClusterReader reader, ClusterWriter writer, DeviceVendor vendor, NodeLock lock) {
    Objects.requireNonNull(reader, "reader");
    Objects.requireNonNull(writer, "writer");
    Objects.requireNonNull(vendor, "vendor");
    Objects.requireNonNull(lock, "lock");
    return new DevicePluginHandoff(reader, writer, vendor, lock);
  }

  /**
   * One kubelet {@code Allocate} call: serves one container per entry of {@code
   * requestedDeviceCounts} (the number of device IDs kubelet passed for that container).
   *
   * @param node this plugin's node
   * @param requestedDeviceCounts device count of each container request, in kubelet's order;
   *     non-empty
   * @return what was served
   * @throws NullPointerException for a null node or count list
   * @throws IllegalArgumentException for a blank node or an empty/negative count list
   */
  public HandoffResult allocate(String node, List<Integer> requestedDeviceCounts) {
    requireNonBlank(node, "node");
    Objects.requireNonNull(requestedDeviceCounts, "requestedDeviceCounts");
    checkArgument(
        !requestedDeviceCounts.isEmpty()
            && requestedDeviceCounts.stream().allMatch(c -> c != null && c >= 0),
        "requestedDeviceCounts must be a non-empty list of counts >= 0: %s",
        requestedDeviceCounts);
    return serve(node, Optional.of(requestedDeviceCounts), Optional.empty());
  }

  /**
   * Serves every pending container of the pod being allocated in one call (each with its own
   * entry's device count).
   *
   * @param node this plugin's node
   * @return what was served
   */
  public HandoffResult allocateAll(String node) {
    requireNonBlank(node, "node");
    return serve(node, Optional.empty(), Optional.empty());
  }

  /**
   * Reports that Allocate failed for a reason outside the hand-off (device health, mounts): finds
   * the pod as {@link #allocate} does (the same decision table: never a pod other than the one
   * Allocate would serve), sets its bind phase {@code failed} and releases its lock once.
   *
   * @param node this plugin's node
   * @param reason why
   * @return {@link HandoffResult.Status#FAILED}, or OWNER_NOT_READY/NO_POD/ERROR (nothing written)
   */
  public HandoffResult fail(String node, String reason) {
    requireNonBlank(node, "node");
    return serve(node, Optional.empty(), Optional.of(Objects.requireNonNull(reason, "reason")));
  }

  private HandoffResult serve(
      String node, Optional<List<Integer>> counts, Optional<String> injectedFailure) {
    mutex.lock();
    try {
      Lookup lookup;
      try {
        lookup = find(node);
      } catch (ClusterException | LockBackendException e) {
        String reason =
            "cannot find the pod being allocated on node " + node + ": " + e.getMessage();
        return new HandoffResult(
            HandoffResult.Status.ERROR,
            Optional.empty(),
            Optional.empty(),
            List.of(),
            false,
            reason,
            Optional.of(FlowFailure.of(reason, e, FlowFailure.Kind.UNAVAILABLE)));
      }
      if (lookup.found().isEmpty()) {
        LOG.debug("node {}: nothing served: {}", node, lookup.notServed().reason());
        return lookup.notServed();
      }
      Found found = lookup.found().get();
      if (injectedFailure.isPresent()) {
        return failed(
            node, found, FlowFailure.of(FlowFailure.Kind.REPORTED, injectedFailure.get()));
      }
      return serveFound(node, found, counts.orElse(null));
    } finally {
      mutex.unlock();
    }
  }

  /** Serves {@code found}'s pending containers ({@code wanted}: kubelet's counts, null for all). */
  private HandoffResult serveFound(String node, Found found, List<Integer> wanted) {
    List<List<ContainerDevice>> entries;
    try {
      entries =
          new ArrayList<>(
              PodDevicesCodec.decode(
                  found.pod().annotations().get(vendor.toAllocateAnnotationKey())));
    } catch (DeviceAnnotationException e) {
      return failed(
          node,
          found,
          FlowFailure.of(
              "undecodable " + vendor.toAllocateAnnotationKey() + ": " + e.getMessage(),
              e,
              FlowFailure.Kind.INVALID_DATA));
    }
    List<ContainerAllocation> served = new ArrayList<>();
    int calls =
        wanted == null ? (int) entries.stream().filter(c -> !c.isEmpty()).count() : wanted.size();
    for (int r = 0; r < calls; r++) {
      int i = firstPending(entries);
      if (i < 0) {
        return failed(
            node,
            found,
            FlowFailure.of(
                FlowFailure.Kind.INVALID_REQUEST,
                "no pending container left in %s for request %d"
                    .formatted(vendor.toAllocateAnnotationKey(), r)));
      }
      List<ContainerDevice> entry = entries.get(i);
      if (wanted != null && wanted.get(r) != entry.size()) {
        return failed(
            node,
            found,
            FlowFailure.of(
                FlowFailure.Kind.INVALID_REQUEST,
                "device number not matched: container %d was allocated %d device(s), kubelet requested %d"
                    .formatted(i, entry.size(), wanted.get(r))));
      }
      served.add(new ContainerAllocation(i, entry));
      entries.set(i, List.of());
    }
    boolean complete = firstPending(entries) < 0;
    MetadataPatch.Builder patch =
        MetadataPatch.builder()
            .expectedUid(found.pod().uid())
            .setAnnotation(vendor.toAllocateAnnotationKey(), PodDevicesCodec.encode(entries));
    if (complete) {
      patch.setAnnotation(HamiAnnotations.BIND_PHASE, AllocationAnnotations.PHASE_SUCCESS);
    }
    try {
      writer.patchPodMetadata(found.pod().namespace(), found.pod().name(), patch.build());
    } catch (ClusterException e) {
      return failed(
          node,
          found,
          FlowFailure.of(
              "cannot mark containers allocated: " + e.getMessage(),
              e,
              FlowFailure.Kind.UNAVAILABLE));
    }
    return complete
        ? found.result(HandoffResult.Status.COMPLETED, served, release(node, found), "")
        : found.result(HandoffResult.Status.PARTIAL, served, false, "");
  }

  private HandoffResult failed(String node, Found found, FlowFailure failure) {
    return Uninterrupted.call(() -> failedCleaningUp(node, found, failure));
  }

  private HandoffResult failedCleaningUp(String node, Found found, FlowFailure failure) {
    String reason = failure.message();
    LOG.debug("node {}: allocation for pod {} failed: {}", node, found.owner(), reason);
    try {
      writer.patchPodMetadata(
          found.pod().namespace(),
          found.pod().name(),
          MetadataPatch.builder()
              .expectedUid(found.pod().uid())
              .setAnnotation(HamiAnnotations.BIND_PHASE, AllocationAnnotations.PHASE_FAILED)
              .build());
    } catch (ClusterException e) {
      LOG.warn(
          "node {}: cannot set bind phase failed on pod {}: {}",
          node,
          found.owner(),
          e.getMessage());
    }
    boolean released = release(node, found);
    return new HandoffResult(
        HandoffResult.Status.FAILED,
        Optional.of(found.owner()),
        Optional.of(found.by()),
        List.of(),
        released,
        reason,
        Optional.of(failure));
  }

  /**
   * Releases the served pod's lock: with the lock value read when the pod was found through the
   * lock owner, one compare-and-delete on that exact value (the value's owner is the pod, so no
   * second read is needed; a value changed meanwhile falls back to the owner-checked path); for a
   * pod found by the list rule, the owner-checked release (read, compare-and-delete). Runs with the
   * thread's interrupt flag cleared (and restores it): an Allocate interrupted at its deadline must
   * still release, and the Kubernetes lock store refuses every request of an interrupted thread,
   * which would keep the node locked for a whole lock timeout.
   */
  private boolean release(String node, Found found) {
    return Uninterrupted.call(() -> releaseNow(node, found));
  }

  private boolean releaseNow(String node, Found found) {
    try {
      Optional<ObservedValueRelease> byValue = lock.observedValueRelease();
      return found.observedLockValue().isPresent() && byValue.isPresent()
          ? byValue.get().release(node, found.owner(), found.observedLockValue().get())
          : lock.release(node, found.owner());
    } catch (LockBackendException e) {
      LOG.warn(
          "node {}: cannot release lock {} of pod {}: {}",
          node,
          lock.key(),
          found.owner(),
          e.getMessage());
      return false;
    }
  }

  /** Applies the decision table of the class Javadoc: a pod to serve, or why there is none. */
  private Lookup find(String node) throws ClusterException, LockBackendException {
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
    String assigned = v.annotations().get(HamiAnnotations.VGPU_NODE);
    String toAllocate = v.annotations().get(vendor.toAllocateAnnotationKey());
    if (!node.equals(assigned) || toAllocate == null) {
      return Lookup.notReady(
          owner,
          "lock owner %s has no allocation for node %s yet (%s=%s, %s %s)"
              .formatted(
                  owner,
                  node,
                  HamiAnnotations.VGPU_NODE,
                  assigned,
                  vendor.toAllocateAnnotationKey(),
                  toAllocate == null ? "absent" : "present"));
    }
    if (served(v)) {
      return Lookup.nobody(
          "no binding pod found on node %s: lock owner %s was already served (bind phase %s)"
              .formatted(node, owner, v.annotations().get(HamiAnnotations.BIND_PHASE)));
    }
    if (!pod.nodeName().equals(Optional.of(node))) {
      return Lookup.notReady(
          owner,
          "lock owner %s is not bound to node %s yet (spec.nodeName=%s)"
              .formatted(owner, node, pod.nodeName().orElse("")));
    }
    return Lookup.serve(
        new Found(v, owner, HandoffResult.FoundBy.LOCK_OWNER, Optional.of(lockValue)));
  }

  private Lookup fromList(String node) throws ClusterException {
    for (ClusterPod p : reader.listPodsOnNode(node)) {
      PodView v = p.view();
      if (v.phase() == PodView.Phase.PENDING
          && p.nodeName().equals(Optional.of(node))
          && v.annotations().containsKey(HamiAnnotations.BIND_TIME)
          && AllocationAnnotations.PHASE_ALLOCATING.equals(
              v.annotations().get(HamiAnnotations.BIND_PHASE))
          && node.equals(v.annotations().get(HamiAnnotations.VGPU_NODE))
          && v.annotations().containsKey(vendor.toAllocateAnnotationKey())
          && !served(v)) {
        return Lookup.serve(
            new Found(
                v,
                BindCall.Subject.ownerOf(v),
                HandoffResult.FoundBy.FALLBACK_LIST,
                Optional.empty()));
      }
    }
    return Lookup.nobody("no binding pod found on node " + node);
  }

  /**
   * Whether the pod's hand-off already ran: bind phase {@code success}/{@code failed}, or a
   * to-allocate list with no entry left. An undecodable list is not served (it is served as a
   * failure, as HAMi's Allocate does).
   */
  private boolean served(PodView pod) {
    String phase = pod.annotations().get(HamiAnnotations.BIND_PHASE);
    if (AllocationAnnotations.PHASE_SUCCESS.equals(phase)
        || AllocationAnnotations.PHASE_FAILED.equals(phase)) {
      return true;
    }
    if (phase != null && !PolicyValues.BIND_PHASE_WORDS.contains(phase)) {
      LOG.warn(
          "{}",
          new AnnotationWarning(
                  pod.key(),
                  HamiAnnotations.BIND_PHASE,
                  phase,
                  "one of " + String.join(", ", PolicyValues.BIND_PHASE_WORDS),
                  "not in any phase: never served as allocating")
              .message());
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

  private static int firstPending(List<List<ContainerDevice>> entries) {
    for (int i = 0; i < entries.size(); i++) {
      if (!entries.get(i).isEmpty()) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The pod to serve, its exact identity, how it was found, and the lock value that named it (empty
   * when found by the list rule).
   */
  private record Found(
      PodView pod, LockOwner owner, HandoffResult.FoundBy by, Optional<String> observedLockValue) {
    HandoffResult result(
        HandoffResult.Status status, List<ContainerAllocation> served, boolean released, String r) {
      return new HandoffResult(status, Optional.of(owner), Optional.of(by), served, released, r);
    }
  }

  /** Either a pod to serve, or the result to report when there is none. */
  private record Lookup(Optional<Found> found, HandoffResult notServed) {
    static Lookup serve(Found f) {
      return new Lookup(Optional.of(f), null);
    }

    static Lookup notReady(LockOwner owner, String reason) {
      return new Lookup(
          Optional.empty(),
          new HandoffResult(
              HandoffResult.Status.OWNER_NOT_READY,
              Optional.of(owner),
              Optional.of(HandoffResult.FoundBy.LOCK_OWNER),
              List.of(),
              false,
              reason));
    }

    static Lookup nobody(String reason) {
      return new Lookup(
          Optional.empty(),
          new HandoffResult(
              HandoffResult.Status.NO_POD,
              Optional.empty(),
              Optional.empty(),
              List.of(),
              false,
              reason));
    }
  }
}
