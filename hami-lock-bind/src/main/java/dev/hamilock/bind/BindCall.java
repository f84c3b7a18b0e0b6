package dev.hamilock.bind;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.GangMembership;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * One {@link PodBinder#bind} call: the request, the pod's asks, and what the call holds and wrote
 * so far (what the clean-up undoes), with step durations. Not thread-safe: steps hand it on through
 * ordered {@code CompletableFuture} stages.
 */
final class BindCall {
  /** The steps whose durations {@link BindTimings} reports (measured with the binder's clock). */
  enum Phase {
    LOCK_WAIT,
    REFIT,
    ANNOTATE,
    BINDING,
    CLEANUP
  }

  final String ns;
  final String name;
  final String uid;
  final String node;
  private final InstantSource clock;
  private final Instant start;
  private final Map<Phase, Duration> took = new EnumMap<>(Phase.class);
  private Subject subject;
  List<NodeLock> held = List.of();
  int attempts;
  Optional<PodDevices> devices = Optional.empty();
  AllocationSource source = AllocationSource.NONE;

  /** The pod's resourceVersion as last read or written: every pod write's precondition. */
  String podVersion = "";

  /** The allocation (or DRA clear) patch this call wrote, or may have: its answer was lost. */
  Optional<MetadataPatch> written = Optional.empty();

  /**
   * The last allocation patch this call's write was answered as applied: a later write that fails
   * (the write-first bind's second write) leaves it on the pod, for {@code Cleanup} to recognise.
   */
  Optional<MetadataPatch> applied = Optional.empty();

  /** The pod, bound by someone else since step 1, as re-read after a write found it changed. */
  Optional<ClusterPod> boundMeanwhile = Optional.empty();

  /** The usage reads started beside the last versioned lock attempt ({@link #lockedAt}). */
  Optional<AllocationChoice.Reads> early = Optional.empty();

  /**
   * The Filter's allocation, written before the usage reads under the lock so that they can be
   * conditioned on that write ({@code PodBinder} step 3); empty: read first, then written.
   */
  Optional<PodDevices> writeFirst = Optional.empty();

  /** The pod version the usage's pod LISTs ask for at least, written under the lock, if any. */
  Optional<String> listedAt = Optional.empty();

  /** The node version the winning lock attempt was conditioned on, if it was. */
  Optional<String> lockedAt = Optional.empty();

  /** Step 5 started beside step 3's pod LISTs, after the first write ({@code BindLocks}). */
  Optional<BindLocks.Confirmation> confirmation = Optional.empty();

  final List<String> problems = new ArrayList<>();

  BindCall(String ns, String name, String uid, String node, InstantSource clock) {
    this.ns = ns;
    this.name = name;
    this.uid = uid;
    this.node = node;
    this.clock = clock;
    this.start = clock.instant();
  }

  String podKey() {
    return ns + "/" + name;
  }

  Instant now() {
    return clock.instant();
  }

  Instant started() {
    return start;
  }

  /** Records {@code phase} as having taken from {@code began} until now. */
  void took(Phase phase, Instant began) {
    took.put(phase, Duration.between(began, clock.instant()));
  }

  /** Whether this call's allocation annotations may be on the pod. */
  boolean annotated() {
    return written.isPresent() && !subject.draRoute();
  }

  void allocated(PodDevices d, AllocationSource s) {
    devices = Optional.of(d);
    source = s;
  }

  /** {@return the pod as read before the lock; present once step 1 parsed its requests} */
  Subject subject() {
    return subject;
  }

  void subject(Subject s) {
    subject = s;
  }

  /** The result of a BOUND call; the locks stay held for the device plugin. */
  BindResult bound(Optional<String> boundNode) {
    return result(BindOutcome.BOUND, Optional.empty(), boundNode);
  }

  /** The result of a call stopped short: {@code stop}'s verdict and failure. */
  BindResult stopped(Stop stop, Optional<String> boundNode) {
    return result(stop.outcome(), Optional.of(stop.failure()), boundNode);
  }

  private BindResult result(
      BindOutcome outcome, Optional<FlowFailure> failure, Optional<String> boundNode) {
    BindTimings timings =
        new BindTimings(
            took.getOrDefault(Phase.LOCK_WAIT, Duration.ZERO),
            took.getOrDefault(Phase.REFIT, Duration.ZERO),
            took.getOrDefault(Phase.ANNOTATE, Duration.ZERO),
            took.getOrDefault(Phase.BINDING, Duration.ZERO),
            took.getOrDefault(Phase.CLEANUP, Duration.ZERO),
            Duration.between(start, clock.instant()));
    return new BindResult(
        outcome,
        ns,
        name,
        node,
        devices,
        source,
        failure.map(FlowFailure::message).orElse(""),
        boundNode,
        failure,
        timings,
        attempts,
        subject == null ? List.of() : subject.keys(),
        !held.isEmpty(),
        problems);
  }

  /**
   * What the pod asks for: {@code vendors} served by device plugins (fitted, allocated, locked
   * for), {@code dra} given through DRA, and {@code served}, the requests without the DRA vendors'
   * (null for an unparsed pod).
   */
  record Subject(
      PodView pod,
      Set<String> vendors,
      List<String> keys,
      Set<String> dra,
      boolean draRoute,
      PodRequests served) {
    /** A pod whose requests could not be parsed: nothing to lock or clear beyond its view. */
    static Subject unparsed(PodView pod) {
      return new Subject(pod, Set.of(), List.of(), Set.of(), false, null);
    }

    /**
     * Splits the vendors by {@link VendorRegistry#viaDra} (per vendor, as kube-scheduler's {@code
     * filterExtendedResources}) and sorts the plugin-served ones' lock keys. Kubelet never calls
     * {@code Allocate} for a DRA resource, so such a vendor is not locked for (the lock would stay
     * until it expires).
     */
    static Subject of(PodView pod, PodRequests requests, VendorRegistry registry) {
      Set<String> vendors = new TreeSet<>();
      Set<String> dra = new TreeSet<>();
      for (Map<String, ContainerDeviceRequest> m : requests.perContainer()) {
        m.keySet().forEach(v -> (registry.viaDra(pod, v) ? dra : vendors).add(v));
      }
      if (registry.allViaDra(pod)) {
        return new Subject(pod, vendors, List.of(), dra, true, requests.without(dra));
      }
      TreeSet<String> keys = new TreeSet<>(registry.lockKeys(requests.pod()));
      for (String v : vendors) {
        registry.vendor(v).flatMap(d -> d.nodeLockKey()).ifPresent(keys::add);
      }
      return new Subject(pod, vendors, List.copyOf(keys), dra, false, requests.without(dra));
    }

    /** The vendors whose allocation annotations the flow writes, removes or restores. */
    Set<String> annotated() {
      Set<String> all = new TreeSet<>(vendors);
      all.addAll(dra);
      return all;
    }

    /** A pod needing neither a device nor a lock: bound as HAMi does, without either. */
    boolean needsNothing() {
      return draRoute || (!served.requestsDevices() && keys.isEmpty());
    }

    boolean gang() {
      return GangMembership.isMember(pod.labels(), pod.podGroupName());
    }

    LockOwner owner() {
      return ownerOf(pod);
    }

    /** The pod's incarnation as a lock owner: with its UID when known. */
    static LockOwner ownerOf(PodView pod) {
      return pod.uid().isBlank()
          ? LockOwner.of(pod.namespace(), pod.name())
          : LockOwner.of(pod.namespace(), pod.name(), pod.uid());
    }
  }

  /** Why the walk stops short of a Binding. */
  record Stop(BindOutcome outcome, FlowFailure failure) {
    /** A verdict whose failure kind follows from it, or from {@code cause} when that says more. */
    Stop(BindOutcome outcome, String reason, Throwable cause) {
      this(outcome, FlowFailure.of(reason, cause, kindOf(outcome)));
    }

    String reason() {
      return failure.message();
    }

    private static FlowFailure.Kind kindOf(BindOutcome outcome) {
      return switch (outcome) {
        case CONTENDED, TIMED_OUT -> FlowFailure.Kind.CONTENTION;
        case DOES_NOT_FIT -> FlowFailure.Kind.DOES_NOT_FIT;
        case INVALID_POD -> FlowFailure.Kind.INVALID_REQUEST;
        case POD_NOT_FOUND, NODE_NOT_FOUND -> FlowFailure.Kind.NOT_FOUND;
        case ALREADY_BOUND -> FlowFailure.Kind.ALREADY_BOUND;
        case UNKNOWN -> FlowFailure.Kind.UNAVAILABLE;
        case FAILED, BOUND -> FlowFailure.Kind.REJECTED;
      };
    }
  }
}
