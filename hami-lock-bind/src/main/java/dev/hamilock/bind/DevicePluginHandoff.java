package dev.hamilock.bind;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
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
 * The device plugin's side of the bind → Allocate hand-off for one vendor on one node (HAMi
 * {@code pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go} Allocate and {@code util.go},
 * {@code pkg/util/util.go} GetPendingPod; spec §3). For Java device plugins, and to simulate
 * HAMi's plugin in tests.
 *
 * <ol>
 *   <li><b>Find the pod</b>: the owner named by the node lock (exact namespace/name), if it has a
 *       pending to-allocate entry for this node; otherwise HAMi's fallback: the first pod in list
 *       order on the node ({@code spec.nodeName}) that is Pending, has {@code hami.io/bind-time},
 *       bind phase {@code allocating} or {@code success} and {@code hami.io/vgpu-node} = node —
 *       <em>stricter than HAMi</em>: it must also still have a pending entry, so a served pod is
 *       never served twice, and an unreadable or ownerless lock value falls back to the list
 *       instead of failing.</li>
 *   <li><b>Serve</b>: decode the vendor's to-allocate annotation per container; for each kubelet
 *       container request take the first non-empty entry (init containers first), check the
 *       device count ({@code device number not matched}), blank it, and write the re-encoded list
 *       back (one {@code ;} per container: {@code A:;B:;} → {@code ;B:;}; HAMi's own decoder adds
 *       one trailing empty container, so its text would be {@code ;B:;;} — both read the same).</li>
 *   <li><b>Complete</b>: no entry left ⇒ {@code hami.io/bind-phase: success} and release the node
 *       lock by exact owner. Any failure ⇒ {@code hami.io/bind-phase: failed} and the same
 *       release. Entries left ⇒ the lock stays for the next Allocate call.</li>
 * </ol>
 * Each exit path releases at most once, and only on completion or failure (HAMi#2214); calling
 * again for a served pod finds nothing ({@link HandoffResult.Status#NO_POD}). Calls are serialized
 * per instance, as HAMi's plugin-wide mutex does. Never throws for cluster or data problems.
 */
public final class DevicePluginHandoff {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginHandoff.class);

  private final ClusterReader reader;
  private final ClusterWriter writer;
  private final DeviceVendor vendor;
  private final NodeLock lock;
  private final ReentrantLock mutex = new ReentrantLock();

  private DevicePluginHandoff(ClusterReader reader, ClusterWriter writer, DeviceVendor vendor, NodeLock lock) {
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
   * @throws IllegalArgumentException naming a null argument
   */
  public static DevicePluginHandoff create(ClusterReader reader, ClusterWriter writer, DeviceVendor vendor,
      NodeLock lock) {
    if (reader == null || writer == null || vendor == null || lock == null) {
      throw new IllegalArgumentException("reader, writer, vendor and lock must not be null");
    }
    return new DevicePluginHandoff(reader, writer, vendor, lock);
  }

  /**
   * One kubelet {@code Allocate} call: serves one container per entry of
   * {@code requestedDeviceCounts} (the number of device IDs kubelet passed for that container).
   *
   * @param node this plugin's node
   * @param requestedDeviceCounts device count of each container request, in kubelet's order; non-empty
   * @return what was served
   * @throws IllegalArgumentException for a blank node or an empty/negative count list
   */
  public HandoffResult allocate(String node, List<Integer> requestedDeviceCounts) {
    requireNode(node);
    if (requestedDeviceCounts == null || requestedDeviceCounts.isEmpty()
        || requestedDeviceCounts.stream().anyMatch(c -> c == null || c < 0)) {
      throw new IllegalArgumentException("requestedDeviceCounts must be a non-empty list of counts >= 0: "
          + requestedDeviceCounts);
    }
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
    requireNode(node);
    return serve(node, Optional.empty(), Optional.empty());
  }

  /**
   * Reports that Allocate failed for a reason outside the hand-off (device health, mounts):
   * finds the pod as {@link #allocate} does, sets bind phase {@code failed} and releases its lock.
   *
   * @param node this plugin's node
   * @param reason why
   * @return {@link HandoffResult.Status#FAILED}, or NO_POD/ERROR
   */
  public HandoffResult fail(String node, String reason) {
    requireNode(node);
    return serve(node, Optional.empty(), Optional.of(Objects.requireNonNull(reason, "reason")));
  }

  private HandoffResult serve(String node, Optional<List<Integer>> counts, Optional<String> injectedFailure) {
    mutex.lock();
    try {
      Found found;
      try {
        found = find(node);
      } catch (ClusterException | LockBackendException e) {
        return new HandoffResult(HandoffResult.Status.ERROR, Optional.empty(), Optional.empty(), List.of(), false,
            "cannot find the pod being allocated on node " + node + ": " + e.getMessage());
      }
      if (found == null) {
        return new HandoffResult(HandoffResult.Status.NO_POD, Optional.empty(), Optional.empty(), List.of(), false,
            "no binding pod found on node " + node);
      }
      if (injectedFailure.isPresent()) {
        return failed(node, found, injectedFailure.get());
      }
      List<List<ContainerDevice>> entries;
      try {
        entries = new ArrayList<>(PodDevicesCodec.decode(found.pod.annotations().get(vendor.toAllocateAnnotationKey())));
      } catch (DeviceAnnotationException e) {
        return failed(node, found, "undecodable " + vendor.toAllocateAnnotationKey() + ": " + e.getMessage());
      }
      List<ContainerAllocation> served = new ArrayList<>();
      List<Integer> wanted = counts.orElse(null);
      int calls = wanted == null ? (int) entries.stream().filter(c -> !c.isEmpty()).count() : wanted.size();
      for (int r = 0; r < calls; r++) {
        int i = firstPending(entries);
        if (i < 0) {
          return failed(node, found, "no pending container left in " + vendor.toAllocateAnnotationKey() + " for request "
              + r);
        }
        List<ContainerDevice> entry = entries.get(i);
        if (wanted != null && wanted.get(r) != entry.size()) {
          return failed(node, found, "device number not matched: container " + i + " was allocated " + entry.size()
              + " device(s), kubelet requested " + wanted.get(r));
        }
        served.add(new ContainerAllocation(i, entry));
        entries.set(i, List.of());
      }
      boolean complete = firstPending(entries) < 0;
      MetadataPatch.Builder patch = MetadataPatch.builder().expectedUid(found.pod.uid())
          .setAnnotation(vendor.toAllocateAnnotationKey(), PodDevicesCodec.encode(entries));
      if (complete) {
        patch.setAnnotation(HamiAnnotations.BIND_PHASE, AllocationAnnotations.PHASE_SUCCESS);
      }
      try {
        writer.patchPodMetadata(found.pod.namespace(), found.pod.name(), patch.build());
      } catch (ClusterException e) {
        return failed(node, found, "cannot mark containers allocated: " + e.getMessage());
      }
      if (!complete) {
        return new HandoffResult(HandoffResult.Status.PARTIAL, Optional.of(found.owner), Optional.of(found.by), served,
            false, "");
      }
      boolean released = release(node, found);
      return new HandoffResult(HandoffResult.Status.COMPLETED, Optional.of(found.owner), Optional.of(found.by), served,
          released, "");
    } finally {
      mutex.unlock();
    }
  }

  private HandoffResult failed(String node, Found found, String reason) {
    LOG.debug("node {}: allocation for pod {} failed: {}", node, found.owner, reason);
    try {
      writer.patchPodMetadata(found.pod.namespace(), found.pod.name(), MetadataPatch.builder()
          .expectedUid(found.pod.uid()).setAnnotation(HamiAnnotations.BIND_PHASE, AllocationAnnotations.PHASE_FAILED)
          .build());
    } catch (ClusterException e) {
      LOG.warn("node {}: cannot set bind phase failed on pod {}: {}", node, found.owner, e.getMessage());
    }
    boolean released = release(node, found);
    return new HandoffResult(HandoffResult.Status.FAILED, Optional.of(found.owner), Optional.of(found.by), List.of(),
        released, reason);
  }

  private boolean release(String node, Found found) {
    try {
      return lock.release(node, found.owner);
    } catch (LockBackendException e) {
      LOG.warn("node {}: cannot release lock {} of pod {}: {}", node, lock.key(), found.owner, e.getMessage());
      return false;
    }
  }

  private Found find(String node) throws ClusterException, LockBackendException {
    Optional<LockRecord> record;
    try {
      record = lock.read(node);
    } catch (MalformedLockException e) {
      LOG.debug("node {}: lock value {} is malformed; using the fallback list", node, e.value());
      record = Optional.empty();
    }
    if (record.isPresent() && record.get().owner().isPresent()) {
      LockOwner o = record.get().owner().get();
      Optional<ClusterPod> p = reader.readPod(o.namespace(), o.name());
      if (p.isPresent() && pending(p.get().view(), node)) {
        return new Found(p.get().view(), HandoffResult.FoundBy.LOCK_OWNER);
      }
    }
    for (ClusterPod p : reader.listPodsOnNode(node)) {
      PodView v = p.view();
      String phase = v.annotations().get(HamiAnnotations.BIND_PHASE);
      if (v.phase() == PodView.Phase.PENDING && v.annotations().containsKey(HamiAnnotations.BIND_TIME)
          && (AllocationAnnotations.PHASE_ALLOCATING.equals(phase) || AllocationAnnotations.PHASE_SUCCESS.equals(phase))
          && pending(v, node)) {
        return new Found(v, HandoffResult.FoundBy.FALLBACK_LIST);
      }
    }
    return null;
  }

  /** Whether the pod's allocation is for this node and has an entry left (or cannot be read). */
  private boolean pending(PodView pod, String node) {
    if (!node.equals(pod.annotations().get(HamiAnnotations.VGPU_NODE))) {
      return false;
    }
    String v = pod.annotations().get(vendor.toAllocateAnnotationKey());
    if (v == null) {
      return false;
    }
    try {
      return firstPending(PodDevicesCodec.decode(v)) >= 0;
    } catch (DeviceAnnotationException e) {
      return true; // served as a failure, as HAMi's Allocate does
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

  private static void requireNode(String node) {
    if (node == null || node.isBlank()) {
      throw new IllegalArgumentException("node must not be null or blank: \"" + node + "\"");
    }
  }

  private static final class Found {
    final PodView pod;
    final LockOwner owner;
    final HandoffResult.FoundBy by;

    Found(PodView pod, HandoffResult.FoundBy by) {
      this.pod = pod;
      this.owner = pod.uid().isBlank() ? LockOwner.of(pod.namespace(), pod.name())
          : LockOwner.of(pod.namespace(), pod.name(), pod.uid());
      this.by = by;
    }
  }
}
