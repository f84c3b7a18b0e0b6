package dev.hamilock.bind;

import static dev.hamilock.device.spi.usage.UsageReconstructor.RESERVATION;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.preempt.MemberPlan;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.PodView;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link GpuPreemption}'s writes: the reservations, the evictions and the Events. */
record PreemptionWrites(
    ClusterReader reader, ClusterWriter writer, VendorRegistry registry, InstantSource clock) {
  private static final Logger LOG = LoggerFactory.getLogger(GpuPreemption.class);

  /**
   * Expires the live reservations of lower-priority preemptors on the members' nodes, which the
   * plan did not count, as kube-scheduler clears lower nominations ({@code preemption.go}
   * prepareCandidate). Compare-and-set on a fresh read (409: left); Event {@code
   * PreemptionReservationDropped}.
   */
  void dropLower(List<RunningPod> pods, List<MemberPlan> plans, int priority, Instant now)
      throws ClusterException {
    Set<String> nodes = plans.stream().map(m -> m.plan().node()).collect(Collectors.toSet());
    for (RunningPod p : pods) {
      PodView v = p.pod();
      String node = v.annotations().getOrDefault(RESERVATION, "").split(",", -1)[0];
      if (p.priority() < priority
          && v.nodeName().isEmpty()
          && nodes.contains(node)
          && UsageReconstructor.reservedUntil(v).filter(now::isBefore).isPresent()) {
        String held = v.annotations().get(RESERVATION);
        Optional<String> version =
            reader
                .readPod(v.namespace(), v.name())
                .filter(c -> !c.isBound() && held.equals(c.view().annotations().get(RESERVATION)))
                .map(ClusterPod::resourceVersion);
        if (version.isEmpty() || !expire(v, node, now, version.get())) {
          continue; // gone or changed: nothing to drop
        }
        event(
            v,
            "Normal",
            "PreemptionReservationDropped",
            "a pod of higher priority preempts on node " + node);
      }
    }
  }

  /** Releases the reservations written (compare-and-set on the version written; 409: left). */
  void release(Map<PodView, String> reserved, Map<String, String> versions, Instant now)
      throws ClusterException {
    for (var r : reserved.entrySet()) {
      if (!expire(r.getKey(), r.getValue(), now, versions.get(r.getKey().key()))) {
        LOG.debug("pod {} changed since its reservation: left as is", r.getKey().key());
      }
    }
    reserved.clear();
  }

  /**
   * Expires the pod's reservation on {@code node} now (UID and {@code version} as preconditions).
   *
   * @return false when the pod is gone or changed (404, 409): nothing written
   */
  boolean expire(PodView pod, String node, Instant now, String version) throws ClusterException {
    MetadataPatch patch =
        MetadataPatch.builder()
            .expectedUid(pod.uid())
            .expectedResourceVersion(version)
            .setAnnotation(RESERVATION, UsageReconstructor.reservation(node, now))
            .build();
    try {
      writer.patchPodMetadata(pod.namespace(), pod.name(), patch);
      return true;
    } catch (ClusterException e) {
      if (e.kind() != ClusterException.Kind.CONFLICT
          && e.kind() != ClusterException.Kind.NOT_FOUND) {
        throw e;
      }
      return false;
    }
  }

  /**
   * One compare-and-set patch per member: its Filter annotations plus the reservation ({@code
   * reserved}: member -> node; {@code versions} updated).
   *
   * @return false after a 409 (those written are released)
   */
  boolean reserve(
      PodView preemptor,
      List<MemberPlan> plans,
      Instant until,
      Map<String, String> versions,
      Map<PodView, String> reserved,
      Instant now)
      throws ClusterException {
    try {
      for (MemberPlan m : plans) {
        PodView pod = m.pod();
        MetadataPatch patch =
            AllocationAnnotations.filterPatch(
                    registry, pod, m.plan().node(), m.fit().devices(), clock.instant())
                .setAnnotation(RESERVATION, UsageReconstructor.reservation(m.plan().node(), until))
                .expectedResourceVersion(versions.get(pod.key()))
                .build();
        versions.put(
            pod.key(),
            writer.patchPodMetadata(pod.namespace(), pod.name(), patch).resourceVersion());
        reserved.put(pod, m.plan().node());
      }
      return true;
    } catch (ClusterException e) {
      if (e.kind() != ClusterException.Kind.CONFLICT) {
        throw e;
      }
      String why = "pod {} changed or is reserved by another replica: {}";
      LOG.debug(why, preemptor.key(), e.getMessage());
      release(reserved, versions, now);
      return false;
    }
  }

  /** Evicts each member's victims in order; the victim a budget refused, if one did. */
  Optional<RunningPod> evict(List<MemberPlan> plans, List<String> evicted) throws ClusterException {
    for (MemberPlan m : plans) {
      PodView pod = m.pod();
      String node = m.plan().node();
      List<String> mine = new ArrayList<>();
      for (RunningPod v : m.plan().victims()) {
        PodView p = v.pod();
        if (p.deleting()) { // already terminating: no second request (kube-scheduler skips it too)
          continue;
        }
        try {
          writer.evictPod(p.namespace(), p.name(), p.uid());
        } catch (ClusterException e) {
          if (e.httpStatus().orElse(0) == 429) {
            event(
                pod,
                "Warning",
                "PreemptionRefused",
                "eviction of " + v.key() + " refused: " + e.getMessage());
            return Optional.of(v);
          } else if (!gone(p, e)) {
            throw e;
          }
        }
        mine.add(v.key());
        event(p, "Normal", "Preempted", "Preempted by pod " + pod.uid() + " on node " + node);
      }
      evicted.addAll(mine);
      if (!mine.isEmpty()) { // a gang member placed without victims preempted nothing
        event(
            pod, "Normal", "Preempting", "evicted " + mine + " on node " + node + " for this pod");
      }
    }
    return Optional.empty();
  }

  /**
   * Whether a fresh read finds the victim gone or re-created (another UID: {@link
   * ClusterWriter#evictPod}); a failed read is suppressed into {@code failure}.
   */
  private boolean gone(PodView victim, ClusterException failure) {
    try {
      return reader
          .readPod(victim.namespace(), victim.name())
          .filter(c -> c.view().uid().equals(victim.uid()))
          .isEmpty();
    } catch (ClusterException e) {
      failure.addSuppressed(e);
      return false;
    }
  }

  private void event(PodView pod, String type, String reason, String message) {
    try {
      writer.recordPodEvent(pod.namespace(), pod.name(), pod.uid(), type, reason, message);
    } catch (ClusterException e) {
      LOG.debug("pod {}: could not record {}: {}", pod.key(), reason, e.getMessage());
    }
  }
}
