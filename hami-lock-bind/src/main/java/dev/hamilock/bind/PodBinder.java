package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.core.GangMembership;
import dev.hamilock.core.GoDuration;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HAMi-compatible bind flow, safer than HAMi's ({@code pkg/scheduler/scheduler.go} Bind, spec
 * §2.3, §3.4), over the backend-neutral {@link ClusterReader}/{@link ClusterWriter} ports.
 *
 * <ol>
 *   <li>Read the pod (fresh). Missing or another UID ⇒ {@link BindOutcome#POD_NOT_FOUND}; already
 *       bound to this node by this flow (a bind kube-scheduler retried after it went through,
 *       kubernetes#96579: {@code hami.io/vgpu-node} = the node, bind phase {@code allocating} or
 *       {@code success}, bind time set, every requested vendor's allocation decodes to the
 *       requested device counts; or a pod requesting no device) ⇒ {@link BindOutcome#BOUND} with an
 *       empty reason and {@link AllocationSource#ALREADY_RECORDED}, no lock taken, nothing written;
 *       bound elsewhere, or here without that allocation ⇒ {@link BindOutcome#ALREADY_BOUND};
 *       unparsable requests ⇒ {@link BindOutcome#INVALID_POD}. A pod requesting no device is bound
 *       without lock or annotations, as HAMi does.
 *   <li>Acquire every lock key its vendors need — {@code DeviceVendor.nodeLockKey()} of each vendor
 *       whose {@code needsLock} holds, and (<em>improvement</em>, spec §7.12) of each vendor
 *       requested only by init containers — in byte order with rollback, gang members ({@code
 *       scheduling.x-k8s.io/pod-group} label) retrying under the {@link RetryPolicy} ({@link
 *       NodeLockAcquirer}).
 *   <li>Under the locks, re-read the node and every pod whose {@code hami.io/vgpu-node} names it
 *       (the pod itself excluded) and rebuild the usage (fail closed). <em>Improvement</em> (HAMi's
 *       Filter assigns devices with no lock, so two schedulers over-commit, spec §3.4 item 5): if
 *       the Filter's allocation recorded on the pod for this node still fits, keep it — for gang
 *       members re-scored on this usage, so that members filtered on one snapshot still end where
 *       the configured policy puts them ({@link Rescore}, {@link AllocationSource#RESCORED}, no
 *       extra request); else re-fit on this node; else {@link BindOutcome#DOES_NOT_FIT} with HAMi's
 *       reasons. Can be switched off ({@link Builder#refitUnderLock(boolean)}), which trusts the
 *       Filter like HAMi.
 *   <li>Write the allocation in one merge patch: every vendor's to-allocate and allocated keys
 *       (same text), {@code hami.io/vgpu-node} (+ the same-named label), {@code hami.io/vgpu-time},
 *       {@code hami.io/bind-phase: allocating}, {@code hami.io/bind-time} (Unix seconds).
 *   <li>Confirm every lock is still this pod's in the store ({@link NodeLock#stillHeld}: one read
 *       of the exact value written while it is under half the lock timeout old, else a
 *       compare-and-set re-stamp of it — one request per lock key; before issue 23 a young lock was
 *       confirmed from this process's memory, no request, so a lock removed by another writer went
 *       unnoticed for up to half the lock timeout): a bind stalled past the lock timeout may have
 *       lost it to a takeover (an unbound holder is not protected by the HAMi#3096 guard), an
 *       operator or HAMi's Go scheduler may have removed it and another pod acquired it ⇒ {@link
 *       BindOutcome#CONTENDED}, cleaned up, no Binding. A Binding cannot be made conditional on a
 *       node annotation, so a removal landing between this confirmation and the Binding (one round
 *       trip) stays possible; its over-commit shows in the pods' allocation annotations (the
 *       planned {@code hami-lock-doctor audit} of issue 23).
 *   <li>POST the Binding. Bound ⇒ {@link BindOutcome#BOUND}, locks kept for the device plugin.
 *       Ambiguous (timeout, 5xx; HAMi#2645) ⇒ re-read the pod: bound to the node ⇒ BOUND; not bound
 *       ⇒ clean up; unreadable ⇒ {@link BindOutcome#UNKNOWN}, everything left in place.
 * </ol>
 *
 * Every failure clears the allocation annotations (or restores them if the pod turned out bound
 * elsewhere) and then releases the locks by exact owner. {@link #bind} never throws for cluster,
 * lock or data problems; it returns a typed {@link BindResult} whose {@link BindResult#failure()}
 * ({@link FlowFailure}) carries the failure's kind, the HTTP status of the answer that failed it,
 * the cause, and whether it is retryable or contention. Contention is logged at DEBUG.
 *
 * <p>Thread-safe; one instance serves any number of concurrent binds.
 */
public final class PodBinder {
  private static final Logger LOG = LoggerFactory.getLogger(PodBinder.class);

  private final ClusterReader reader;
  private final ClusterWriter writer;
  private final VendorRegistry registry;
  private final PodFitter fitter;
  private final UsageReconstructor usage;
  private final NodeLockProvider locks;
  private final NodeLockAcquirer acquirer;
  private final boolean refitUnderLock;
  private final Rescore rescore;
  private final InstantSource clock;
  private final int ambiguityRereads;

  private PodBinder(Builder b) {
    this.reader = b.reader;
    this.writer = b.writer;
    this.registry = b.registry;
    this.fitter = b.fitter != null ? b.fitter : PodFitter.create(b.registry);
    this.usage = new UsageReconstructor(b.registry);
    this.locks = b.locks;
    this.acquirer =
        b.acquirer != null ? b.acquirer : NodeLockAcquirer.create(b.retryPolicy, b.lockListener);
    this.refitUnderLock = b.refitUnderLock;
    this.rescore = b.rescore;
    this.clock = b.clock;
    this.ambiguityRereads = b.ambiguityRereads;
  }

  /**
   * @param reader fresh reads (see {@link ClusterReader}'s freshness contract)
   * @param writer pod patches and bindings
   * @param registry the enabled device vendors
   * @param locks the node lock of each lock key
   * @return a builder with HAMi's retry defaults (100 ms poll, 28 s), re-fit under the lock on, the
   *     system UTC clock and 3 re-reads after an ambiguous binding
   * @throws NullPointerException naming a null argument
   */
  public static Builder builder(
      ClusterReader reader, ClusterWriter writer, VendorRegistry registry, NodeLockProvider locks) {
    return new Builder(reader, writer, registry, locks);
  }

  /**
   * @return whether the allocation is checked and re-fitted under the lock
   */
  public boolean refitUnderLock() {
    return refitUnderLock;
  }

  /**
   * @return which pods have a still-fitting Filter allocation re-scored under the lock
   */
  public Rescore rescoreUnderLock() {
    return rescore;
  }

  /**
   * Which pods have their Filter allocation re-scored under the lock when it still fits (issue 16
   * item 10). kube-scheduler filters a gang's members one after another, often before any of them
   * is bound, and several scheduler replicas filter concurrently: members filtered on the same
   * usage snapshot all get the same devices (under {@code spread}, the same least-used GPU), so the
   * configured policy is lost although nothing is over-committed (the under-lock re-fit sees to
   * that). Under the lock the binder has the fresh usage anyway; re-scoring fits the pod there with
   * the same fitter (policies) and writes the policy's choice when it differs from the Filter's
   * ({@link AllocationSource#RESCORED}).
   *
   * <p>Cost: no request — the re-score uses the node and pods the re-fit has just read (one {@code
   * GET node} and the pods assigned to it); the CPU of one more fit of the pod on one node. Only
   * the device choice on the node kube-scheduler chose can change; the node itself cannot. Needs
   * {@link Builder#refitUnderLock(boolean)} on.
   */
  public enum Rescore {
    /** Keep every Filter allocation that still fits (HAMi's behaviour). */
    OFF,
    /**
     * Re-score gang members only ({@code scheduling.x-k8s.io/pod-group} label or {@code
     * spec.schedulingGroup}), the pods released into the bind phase together; the default. A pod
     * outside a gang keeps the allocation its Filter answer announced.
     */
    GANG_MEMBERS,
    /** Re-score every pod. */
    ALL
  }

  /**
   * Binds a pod to a node (HAMi extender {@code Bind(podName, namespace, uid, node)}).
   *
   * @param namespace the pod's namespace; non-blank
   * @param name the pod's name; non-blank
   * @param uid the pod's UID as kube-scheduler passes it; "" to accept any incarnation
   * @param node the chosen node; non-blank
   * @return the typed result; never null
   * @throws NullPointerException naming a null argument
   * @throws IllegalArgumentException naming a blank namespace, name or node
   */
  public BindResult bind(String namespace, String name, String uid, String node) {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    requireNonBlank(node, "node");
    Objects.requireNonNull(uid, "uid");
    return run(new Target(namespace, name, uid, node, clock.instant()));
  }

  /**
   * Runs {@link #bind} on {@code executor}.
   *
   * @param namespace the pod's namespace
   * @param name the pod's name
   * @param uid the pod's UID, "" for any
   * @param node the chosen node
   * @param executor runs the blocking flow (up to the lock retry timeout plus a few round trips)
   * @return the future result; completed exceptionally only with {@link RejectedExecutionException}
   * @throws NullPointerException as {@link #bind}, or for a null executor
   * @throws IllegalArgumentException as {@link #bind}
   */
  public CompletableFuture<BindResult> bindAsync(
      String namespace, String name, String uid, String node, Executor executor) {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    requireNonBlank(node, "node");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(executor, "executor");
    try {
      return CompletableFuture.supplyAsync(() -> bind(namespace, name, uid, node), executor);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // One bind call is a walk of small steps. Each step takes the values it needs as parameters
  // and returns a new value: the request (Target), what the pod asks for (Subject), and what the
  // call holds and wrote so far (Progress, immutable; cleanup undoes exactly what it records).
  // A step that cannot continue returns a Step with a Stop; run() then cleans up and reports.

  /** The validated request and when the call started. */
  private record Target(String ns, String name, String uid, String node, Instant start) {
    String podKey() {
      return ns + "/" + name;
    }
  }

  /**
   * What the pod (as read before the lock) asks for: its vendors and lock keys; the pod's
   * incarnation is the lock owner and the Binding's UID.
   */
  private record Subject(PodView pod, Set<String> vendors, List<String> keys) {
    boolean gang() {
      return GangMembership.isMember(pod.labels(), pod.podGroupName());
    }

    LockOwner owner() {
      return pod.uid().isBlank()
          ? LockOwner.of(pod.namespace(), pod.name())
          : LockOwner.of(pod.namespace(), pod.name(), pod.uid());
    }
  }

  /**
   * What one call holds and wrote so far, with its step durations: the locks it holds, its lock
   * attempts, the allocation chosen and where it came from, whether the allocation annotations may
   * be on the pod, and the problems cleanup met. Immutable.
   */
  private record Progress(
      List<NodeLock> held,
      int attempts,
      Optional<PodDevices> devices,
      AllocationSource source,
      boolean annotated,
      List<String> problems,
      BindTimings timings) {
    static final Progress START =
        new Progress(
            List.of(),
            0,
            Optional.empty(),
            AllocationSource.NONE,
            false,
            List.of(),
            BindTimings.ZERO);

    Progress locked(List<NodeLock> locks, int n, Duration wait) {
      return new Progress(
          locks, n, devices, source, annotated, problems, timed(wait, null, null, null, null));
    }

    Progress lockFailed(int n, Duration wait) {
      return new Progress(
          held, n, devices, source, annotated, problems, timed(wait, null, null, null, null));
    }

    Progress allocated(PodDevices d, AllocationSource s) {
      return new Progress(held, attempts, Optional.of(d), s, annotated, problems, timings);
    }

    Progress refitTook(Duration d) {
      return new Progress(
          held, attempts, devices, source, annotated, problems, timed(null, d, null, null, null));
    }

    Progress annotated(boolean on, Duration took) {
      return new Progress(
          held,
          attempts,
          devices,
          source,
          on,
          problems,
          took == null ? timings : timed(null, null, took, null, null));
    }

    Progress bindingTook(Duration d) {
      return new Progress(
          held, attempts, devices, source, annotated, problems, timed(null, null, null, d, null));
    }

    Progress cleanupTook(Duration d) {
      return new Progress(
          held,
          attempts,
          devices,
          source,
          annotated,
          problems,
          timed(null, null, null, null, timings.cleanup().plus(d)));
    }

    Progress released() {
      return new Progress(List.of(), attempts, devices, source, annotated, problems, timings);
    }

    Progress problem(String p) {
      List<String> all = new ArrayList<>(problems);
      all.add(p);
      return new Progress(held, attempts, devices, source, annotated, List.copyOf(all), timings);
    }

    private BindTimings timed(
        Duration lockWait, Duration refit, Duration annotate, Duration binding, Duration cleanup) {
      BindTimings t = timings;
      return new BindTimings(
          lockWait != null ? lockWait : t.lockWait(),
          refit != null ? refit : t.refit(),
          annotate != null ? annotate : t.annotate(),
          binding != null ? binding : t.binding(),
          cleanup != null ? cleanup : t.cleanup(),
          t.total());
    }
  }

  /**
   * Why the walk stops short of a Binding: the flow's verdict and the typed failure (its message is
   * the reason).
   */
  private record Stop(BindOutcome outcome, FlowFailure failure) {
    Stop(BindOutcome outcome, String reason, Throwable cause) {
      this(outcome, FlowFailure.of(reason, cause, kindOf(outcome)));
    }

    String reason() {
      return failure.message();
    }
  }

  /** The failure kind of a verdict reached without an exception that says more. */
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

  /** A step's answer: the progress to continue from, and a stop if the walk must not continue. */
  private record Step(Progress progress, Optional<Stop> stop) {
    static Step go(Progress p) {
      return new Step(p, Optional.empty());
    }

    static Step stop(Progress p, BindOutcome outcome, String reason, Throwable cause) {
      return new Step(p, Optional.of(new Stop(outcome, reason, cause)));
    }
  }

  private BindResult run(Target t) {
    ClusterPod cp;
    try {
      cp = reader.readPod(t.ns(), t.name()).orElse(null);
    } catch (ClusterException e) {
      return done(
          t,
          List.of(),
          Progress.START,
          BindOutcome.FAILED,
          "cannot read pod " + t.podKey() + ": " + e.getMessage(),
          e,
          Optional.empty());
    }
    if (cp == null) {
      return done(
          t,
          List.of(),
          Progress.START,
          BindOutcome.POD_NOT_FOUND,
          "pod " + t.podKey() + " not found",
          null,
          Optional.empty());
    }
    if (!t.uid().isEmpty() && !t.uid().equals(cp.view().uid())) {
      return done(
          t,
          List.of(),
          Progress.START,
          BindOutcome.POD_NOT_FOUND,
          "pod " + t.podKey() + " has uid " + cp.view().uid() + ", not " + t.uid(),
          null,
          Optional.empty());
    }
    if (cp.isBound()) {
      return alreadyBound(t, cp);
    }
    PodView before = cp.view();
    PodRequests requests;
    try {
      requests = fitter.requests(before);
    } catch (InvalidPodRequestException e) {
      return fail(
          t,
          new Subject(before, Set.of(), List.of()),
          Progress.START,
          new Stop(BindOutcome.INVALID_POD, e.getMessage(), e));
    }
    Subject s = new Subject(before, requestedVendors(requests), lockKeys(requests));
    if (!requests.requestsDevices() && s.keys().isEmpty()) {
      return postBinding(
          t, s, Progress.START); // HAMi binds device-less pods without lock or annotations
    }
    Step step = s.keys().isEmpty() ? Step.go(Progress.START) : acquire(t, s, Progress.START);
    if (step.stop().isEmpty()) {
      Instant began = clock.instant();
      step = chooseAllocation(t, s, requests, step.progress());
      step =
          new Step(
              step.progress().refitTook(Duration.between(began, clock.instant())), step.stop());
    }
    if (step.stop().isEmpty()) {
      step = annotate(t, s, step.progress());
    }
    if (step.stop().isPresent()) {
      return fail(t, s, step.progress(), step.stop().get());
    }
    return postBinding(t, s, step.progress());
  }

  /**
   * The pod is bound already: a retried bind of ours (kubernetes#96579) is BOUND, else
   * ALREADY_BOUND.
   */
  private BindResult alreadyBound(Target t, ClusterPod cp) {
    String boundTo = cp.nodeName().get();
    if (!boundTo.equals(t.node())) {
      return done(
          t,
          List.of(),
          Progress.START,
          BindOutcome.ALREADY_BOUND,
          "pod " + t.podKey() + " is already bound to node " + boundTo + ", not " + t.node(),
          null,
          cp.nodeName());
    }
    Retried retried = boundHereByThisFlow(t.node(), cp.view());
    if (retried.problem().isPresent()) {
      return done(
          t,
          List.of(),
          Progress.START,
          BindOutcome.ALREADY_BOUND,
          "pod "
              + t.podKey()
              + " is already bound to node "
              + boundTo
              + " but not by this bind flow: "
              + retried.problem().get(),
          null,
          cp.nodeName());
    }
    LOG.debug(
        "pod {} is already bound to node {} by this flow: retried bind answered as bound "
            + "(kubernetes#96579), no lock taken",
        t.podKey(),
        t.node());
    Progress p =
        retried
            .devices()
            .map(d -> Progress.START.allocated(d, AllocationSource.ALREADY_RECORDED))
            .orElse(Progress.START);
    return done(t, List.of(), p, BindOutcome.BOUND, null, cp.nodeName());
  }

  /**
   * Whether a bound pod carries this flow's allocation: {@code problem} empty if consistent (then
   * {@code devices} is the recorded allocation, empty for a pod requesting no device), else what is
   * missing or inconsistent.
   */
  private record Retried(Optional<String> problem, Optional<PodDevices> devices) {
    static Retried inconsistent(String problem) {
      return new Retried(Optional.of(problem), Optional.empty());
    }
  }

  /**
   * Whether a pod bound to {@code node} carries this flow's allocation for it (a retried bind,
   * kubernetes#96579): a pod requesting no device needs nothing; otherwise {@code
   * hami.io/vgpu-node} names the node, the bind phase is {@code allocating} or {@code success},
   * {@code hami.io/bind-time} is set and every requested vendor's allocated annotation decodes to
   * one entry per container with as many devices as requested.
   */
  private Retried boundHereByThisFlow(String node, PodView pod) {
    PodRequests requests;
    try {
      requests = fitter.requests(pod);
    } catch (InvalidPodRequestException e) {
      return Retried.inconsistent("its requests cannot be parsed: " + e.getMessage());
    }
    Set<String> requested = requestedVendors(requests);
    if (!requests.requestsDevices() && lockKeys(requests).isEmpty()) {
      return new Retried(Optional.empty(), Optional.empty());
    }
    String assigned = pod.annotations().get(HamiAnnotations.VGPU_NODE);
    if (!node.equals(assigned)) {
      return Retried.inconsistent(HamiAnnotations.VGPU_NODE + "=" + assigned);
    }
    String phase = pod.annotations().get(HamiAnnotations.BIND_PHASE);
    if (!AllocationAnnotations.PHASE_ALLOCATING.equals(phase)
        && !AllocationAnnotations.PHASE_SUCCESS.equals(phase)) {
      return Retried.inconsistent(HamiAnnotations.BIND_PHASE + "=" + phase);
    }
    if (!pod.annotations().containsKey(HamiAnnotations.BIND_TIME)) {
      return Retried.inconsistent(HamiAnnotations.BIND_TIME + " absent");
    }
    StringBuilder problem = new StringBuilder();
    Optional<PodDevices> rec =
        AllocationAnnotations.recorded(registry, requested, pod, node, problem);
    if (rec.isEmpty()) {
      return Retried.inconsistent(
          problem.length() > 0 ? problem.toString() : "an allocated annotation is absent");
    }
    List<Map<String, ContainerDeviceRequest>> per = requests.perContainer();
    for (String v : requested) {
      List<List<ContainerDevice>> entries = rec.get().forVendor(v);
      if (entries.size() != per.size()) {
        return Retried.inconsistent(
            "the "
                + v
                + " allocation has "
                + entries.size()
                + " container entries, the pod has "
                + per.size()
                + " containers");
      }
      for (int ci = 0; ci < per.size(); ci++) {
        ContainerDeviceRequest r = per.get(ci).get(v);
        int want = r == null ? 0 : r.nums();
        if (entries.get(ci).size() != want) {
          return Retried.inconsistent(
              "container "
                  + ci
                  + " requests "
                  + want
                  + " "
                  + v
                  + " device(s), the allocation gives "
                  + entries.get(ci).size());
        }
      }
    }
    return new Retried(Optional.empty(), rec);
  }

  /** Takes every lock key the pod needs (gang members retry under the policy). */
  private Step acquire(Target t, Subject s, Progress p) {
    List<NodeLock> list = new ArrayList<>(s.keys().size());
    try {
      for (String k : s.keys()) {
        list.add(locks.forKey(k));
      }
    } catch (IllegalArgumentException e) {
      return Step.stop(
          p,
          BindOutcome.FAILED,
          "no node lock for the pod's lock keys " + s.keys() + ": " + e.getMessage(),
          e);
    }
    boolean gang = s.gang();
    LockOwner owner = s.owner();
    String node = t.node();
    Instant began = clock.instant();
    try {
      LockAcquisition a = acquirer.acquire(node, owner, gang, list);
      return Step.go(p.locked(list, a.attempts(), since(began)));
    } catch (LockWaitTimeoutException e) {
      LOG.debug(
          "node {}: pod {} gave up waiting for the node lock: {}", node, owner, e.getMessage());
      return Step.stop(
          p.lockFailed(e.attempts(), since(began)), BindOutcome.TIMED_OUT, e.getMessage(), e);
    } catch (LockContentionException e) {
      LOG.debug("node {}: pod {} met node lock contention: {}", node, owner, e.getMessage());
      return Step.stop(p.lockFailed(1, since(began)), BindOutcome.CONTENDED, e.getMessage(), e);
    } catch (LockBackendException e) {
      return Step.stop(
          p.lockFailed(Math.max(1, p.attempts()), since(began)), lockFailure(e), e.getMessage(), e);
    } catch (NodeLockException e) {
      return Step.stop(
          p.lockFailed(p.attempts(), since(began)), BindOutcome.FAILED, e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Step.stop(
          p.lockFailed(p.attempts(), since(began)),
          BindOutcome.FAILED,
          "interrupted while waiting for the node lock on " + node,
          e);
    }
  }

  private static BindOutcome lockFailure(LockBackendException e) {
    return e.kind() == LockBackendException.Kind.NODE_NOT_FOUND
        ? BindOutcome.NODE_NOT_FOUND
        : BindOutcome.FAILED;
  }

  private Duration since(Instant began) {
    return Duration.between(began, clock.instant());
  }

  /** Under the locks: re-reads the node's usage and keeps, or re-fits, the allocation. */
  private Step chooseAllocation(Target t, Subject s, PodRequests requests, Progress p) {
    String node = t.node();
    NodeView nodeView;
    List<PodView> others = new ArrayList<>();
    try {
      nodeView = reader.readNode(node).orElse(null);
      if (nodeView == null) {
        return Step.stop(p, BindOutcome.NODE_NOT_FOUND, "node " + node + " not found", null);
      }
      for (ClusterPod other : reader.listPodsAssignedTo(node)) {
        if (!(other.view().namespace().equals(t.ns()) && other.view().name().equals(t.name()))) {
          others.add(other.view());
        }
      }
    } catch (ClusterException e) {
      return Step.stop(
          p,
          BindOutcome.FAILED,
          "cannot read the usage of node " + node + ": " + e.getMessage(),
          e);
    }
    NodeUsage nodeUsage = usage.nodeUsage(nodeView, others);
    StringBuilder problem = new StringBuilder();
    Optional<PodDevices> recorded =
        AllocationAnnotations.recorded(registry, s.vendors(), s.pod(), node, problem);
    if (problem.length() > 0) {
      LOG.debug("pod {}: ignoring its recorded allocation: {}", s.owner(), problem);
    }
    if (!refitUnderLock && recorded.isPresent()) {
      return Step.go(p.allocated(recorded.get(), AllocationSource.UNCHECKED));
    }
    String why = "";
    if (recorded.isPresent()) {
      Optional<String> misfit =
          AllocationCheck.verify(registry, requests, nodeUsage, recorded.get());
      if (misfit.isEmpty()) {
        return Step.go(rescore(s, requests, nodeUsage, recorded.get(), p));
      }
      why = "the Filter's allocation no longer fits (" + misfit.get() + "); ";
      LOG.debug("pod {} on node {}: {}", s.owner(), node, why);
    }
    NodeFit fit = fitter.fit(requests, nodeUsage, FitContext.newMemo());
    if (!fit.fits()) {
      return Step.stop(
          p, BindOutcome.DOES_NOT_FIT, why + "node " + node + ": " + fit.reason(), null);
    }
    return Step.go(p.allocated(fit.devices(), AllocationSource.REFITTED));
  }

  /**
   * The Filter's allocation still fits: keep it, or — for the pods {@link #rescore} covers — the
   * policy's choice on the usage read under the lock if that differs (no request).
   */
  private Progress rescore(
      Subject s, PodRequests requests, NodeUsage nodeUsage, PodDevices recorded, Progress p) {
    boolean covered = rescore == Rescore.ALL || (rescore == Rescore.GANG_MEMBERS && s.gang());
    if (covered) {
      NodeFit fresh = fitter.fit(requests, nodeUsage, FitContext.newMemo());
      if (fresh.fits() && !sameDevices(fresh.devices(), recorded)) {
        LOG.debug(
            "pod {} on node {}: the policy now picks {} instead of the Filter's {} (re-scored under the lock)",
            s.owner(),
            nodeUsage.name(),
            uuids(fresh.devices()),
            uuids(recorded));
        return p.allocated(fresh.devices(), AllocationSource.RESCORED);
      }
    }
    return p.allocated(recorded, AllocationSource.FILTER_KEPT);
  }

  /**
   * Whether two allocations give every container of every vendor the same devices (by UUID, in
   * order).
   */
  private static boolean sameDevices(PodDevices a, PodDevices b) {
    return uuids(a).equals(uuids(b));
  }

  private static Map<String, List<List<String>>> uuids(PodDevices d) {
    Map<String, List<List<String>>> out = new java.util.TreeMap<>();
    d.byVendor()
        .forEach(
            (v, containers) ->
                out.put(
                    v,
                    containers.stream()
                        .map(c -> c.stream().map(ContainerDevice::uuid).toList())
                        .toList()));
    return out;
  }

  /** Writes the allocation annotations (one merge patch). */
  private Step annotate(Target t, Subject s, Progress p) {
    Instant began = clock.instant();
    try {
      writer.patchPodMetadata(
          t.ns(),
          t.name(),
          AllocationAnnotations.bindPatch(
              registry, s.pod(), t.node(), p.devices().orElseThrow(), clock.instant()));
      return Step.go(p.annotated(true, since(began)));
    } catch (ClusterException e) {
      Progress q =
          p.annotated(
              e.kind() == ClusterException.Kind.UNAVAILABLE, since(began)); // may have been applied
      if (e.kind() == ClusterException.Kind.NOT_FOUND) {
        return Step.stop(
            q,
            BindOutcome.POD_NOT_FOUND,
            "pod "
                + t.podKey()
                + " disappeared before its allocation was written: "
                + e.getMessage(),
            e);
      }
      return Step.stop(
          q,
          BindOutcome.FAILED,
          "cannot write the allocation of pod " + t.podKey() + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * Right before the Binding: every held lock must still be this pod's in the store ({@link
   * NodeLock#stillHeld}, one request per lock). A pod not yet bound is no HAMi#3096-protected
   * holder, so a bind stalled past the lock timeout (GC pause, slow API server) may have lost its
   * lock to a takeover; and any bind may have lost it to another writer removing it (operator,
   * skewed HAMi scheduler). The new holder may have allocated the same devices meanwhile; binding
   * then would let the device plugin serve two pods from one allocation. Lost ⇒ {@link
   * BindOutcome#CONTENDED} (the allocation annotations are cleared, our remaining locks released,
   * the new holder's lock left alone) and kube-scheduler retries the pod.
   *
   * @return empty if every lock is still held, else why the walk stops
   */
  private Optional<Stop> confirmLocksBeforeBinding(Target t, Subject s, Progress p) {
    for (NodeLock lock : p.held()) {
      boolean mine;
      try {
        mine = lock.stillHeld(t.node(), s.owner());
      } catch (LockBackendException e) {
        return Optional.of(
            new Stop(
                lockFailure(e),
                "cannot confirm node lock "
                    + lock.key()
                    + " on "
                    + t.node()
                    + " before binding pod "
                    + t.podKey()
                    + ": "
                    + e.getMessage(),
                e));
      }
      if (!mine) {
        Duration took =
            Duration.between(t.start(), clock.instant()).truncatedTo(ChronoUnit.SECONDS);
        String why =
            "node lock "
                + lock.key()
                + " on "
                + t.node()
                + " is no longer held by pod "
                + t.podKey()
                + " (taken over after it expired, or removed by another writer: the bind took "
                + GoDuration.formatSaturated(took)
                + ", lock timeout "
                + GoDuration.formatSaturated(lock.lockTimeout())
                + "); not binding on a lost lock";
        LOG.warn("{}", why);
        return Optional.of(new Stop(BindOutcome.CONTENDED, why, null));
      }
    }
    return Optional.empty();
  }

  /** Confirms the locks, POSTs the Binding and maps its result. */
  private BindResult postBinding(Target t, Subject s, Progress p) {
    if (!p.held().isEmpty()) {
      Optional<Stop> lost = confirmLocksBeforeBinding(t, s, p);
      if (lost.isPresent()) {
        return fail(t, s, p, lost.get());
      }
    }
    Instant began = clock.instant();
    BindingPostResult b = writer.bind(t.ns(), t.name(), s.pod().uid(), t.node());
    Progress q = p.bindingTook(since(began));
    switch (b.kind()) {
      case BOUND:
        return done(t, s.keys(), q, BindOutcome.BOUND, null, Optional.empty());
      case ALREADY_BOUND:
        if (b.boundNode().filter(t.node()::equals).isPresent()) {
          return done(t, s.keys(), q, BindOutcome.BOUND, null, Optional.empty());
        }
        return boundElsewhere(t, s, q, b.boundNode(), b);
      case NOT_FOUND:
        return fail(
            t,
            s,
            q,
            new Stop(
                BindOutcome.POD_NOT_FOUND,
                FlowFailure.of(
                    "binding pod " + t.podKey() + " to " + t.node() + ": " + b.detail(), b)));
      case REJECTED:
        return fail(
            t,
            s,
            q,
            new Stop(
                BindOutcome.FAILED,
                FlowFailure.of(
                    "binding pod "
                        + t.podKey()
                        + " to "
                        + t.node()
                        + " was rejected: "
                        + b.detail(),
                    b)));
      case AMBIGUOUS:
      default:
        return resolveAmbiguous(t, s, q, began, b);
    }
  }

  /**
   * HAMi#2645: the binding may or may not have been applied; the pod tells. The re-reads run with
   * the thread's interrupt flag cleared and restored afterwards, as the cleanup does (see {@link
   * #fail}): a Binding POST cut short by an interrupt (an HTTP server past its deadline) is
   * ambiguous exactly then, and the Kubernetes ports refuse an interrupted thread's reads — the
   * outcome would stay UNKNOWN and the locks held for a lock timeout.
   */
  private BindResult resolveAmbiguous(
      Target t, Subject s, Progress p, Instant bindingStart, BindingPostResult b) {
    boolean interrupted = Thread.interrupted();
    try {
      return resolveAmbiguousReading(t, s, p, bindingStart, b);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private BindResult resolveAmbiguousReading(
      Target t, Subject s, Progress p, Instant bindingStart, BindingPostResult b) {
    String detail = b.detail();
    ClusterException last = null;
    for (int i = 0; i < ambiguityRereads; i++) {
      Optional<ClusterPod> read;
      try {
        read = reader.readPod(t.ns(), t.name());
      } catch (ClusterException e) {
        last = e;
        continue;
      } finally {
        p = p.bindingTook(since(bindingStart));
      }
      String currentUid = s.pod().uid();
      if (read.isEmpty()
          || (!currentUid.isEmpty() && !currentUid.equals(read.get().view().uid()))) {
        return fail(
            t,
            s,
            p,
            new Stop(
                BindOutcome.POD_NOT_FOUND,
                new FlowFailure(
                    FlowFailure.Kind.NOT_FOUND,
                    "pod "
                        + t.podKey()
                        + " disappeared during an ambiguous binding ("
                        + detail
                        + ")",
                    b.httpStatus(),
                    b.cause())));
      }
      if (read.get().nodeName().filter(t.node()::equals).isPresent()) {
        LOG.debug("pod {}: ambiguous binding ({}) turned out applied", t.podKey(), detail);
        return done(t, s.keys(), p, BindOutcome.BOUND, null, Optional.empty());
      }
      if (read.get().isBound()) {
        return boundElsewhere(t, s, p, read.get().nodeName(), b);
      }
      return fail(
          t,
          s,
          p,
          new Stop(
              BindOutcome.FAILED,
              FlowFailure.of(
                  "binding pod " + t.podKey() + " to " + t.node() + " was not applied: " + detail,
                  b)));
    }
    String why =
        "binding pod "
            + t.podKey()
            + " to "
            + t.node()
            + " has an unknown outcome ("
            + detail
            + ") and the pod could not be re-read"
            + (last == null ? "" : ": " + last.getMessage());
    LOG.warn("{}; leaving its locks and allocation annotations in place", why);
    FlowFailure unknown =
        new FlowFailure(
            FlowFailure.Kind.UNAVAILABLE,
            why,
            b.httpStatus(),
            last != null ? Optional.of(last) : b.cause());
    return done(t, s.keys(), p, BindOutcome.UNKNOWN, unknown, Optional.empty());
  }

  /** The pod turned out bound to another node: restore its annotations, release our locks. */
  private BindResult boundElsewhere(
      Target t, Subject s, Progress p, Optional<String> other, BindingPostResult b) {
    boolean interrupted = Thread.interrupted(); // see fail(): the cleanup must reach the API
    try {
      return boundElsewhereCleaningUp(t, s, p, other, b);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private BindResult boundElsewhereCleaningUp(
      Target t, Subject s, Progress p, Optional<String> other, BindingPostResult b) {
    Instant began = clock.instant();
    Progress q = p;
    if (q.annotated()) {
      try {
        writer.patchPodMetadata(
            t.ns(), t.name(), AllocationAnnotations.restorePatch(registry, s.vendors(), s.pod()));
        q = q.annotated(false, null);
      } catch (ClusterException e) {
        if (e.kind() != ClusterException.Kind.NOT_FOUND) {
          q =
              q.problem(
                  "cannot restore the annotations of pod " + t.podKey() + ": " + e.getMessage());
        }
      }
    }
    q = releaseLocks(t, s, q);
    q = q.cleanupTook(since(began));
    FlowFailure failure =
        new FlowFailure(
            FlowFailure.Kind.ALREADY_BOUND,
            "pod " + t.podKey() + " is bound to node " + other.orElse("?") + ": " + b.detail(),
            b.httpStatus(),
            b.cause());
    return done(t, s.keys(), q, BindOutcome.ALREADY_BOUND, failure, other);
  }

  /** Failure: clear what we (or the Filter) wrote, release the locks, report. */
  /**
   * Cleans up (clears the allocation annotations, releases the locks) and reports {@code stop}. The
   * cleanup runs with the thread's interrupt flag cleared, and the flag is restored afterwards: an
   * interrupted bind (an HTTP server past its deadline, a cancel) is exactly when the cleanup must
   * happen, and the Kubernetes ports refuse every request of an interrupted thread — a lock release
   * refused so would keep the node locked for a whole lock timeout.
   */
  private BindResult fail(Target t, Subject s, Progress p, Stop stop) {
    boolean interrupted = Thread.interrupted();
    try {
      return failCleaningUp(t, s, p, stop);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private BindResult failCleaningUp(Target t, Subject s, Progress p, Stop stop) {
    Instant began = clock.instant();
    Progress q = p;
    if ((q.annotated() || AllocationAnnotations.hasAny(registry, s.vendors(), s.pod()))
        && stop.outcome() != BindOutcome.POD_NOT_FOUND) {
      try {
        writer.patchPodMetadata(
            t.ns(),
            t.name(),
            AllocationAnnotations.clearPatch(registry, s.vendors(), s.pod().uid()));
        q = q.annotated(false, null);
      } catch (ClusterException e) {
        if (e.kind() != ClusterException.Kind.NOT_FOUND) {
          q =
              q.problem(
                  "cannot clear the allocation annotations of pod "
                      + t.podKey()
                      + ": "
                      + e.getMessage());
        }
      }
    }
    q = releaseLocks(t, s, q);
    q = q.cleanupTook(since(began));
    if (!q.problems().isEmpty()) {
      LOG.warn(
          "pod {} on node {}: bind failed ({}) and cleanup was incomplete: {}",
          t.podKey(),
          t.node(),
          stop.reason(),
          q.problems());
    }
    return done(t, s.keys(), q, stop.outcome(), stop.failure(), Optional.empty());
  }

  private Progress releaseLocks(Target t, Subject s, Progress p) {
    if (p.held().isEmpty()) {
      return p;
    }
    try {
      acquirer.releaseAll(t.node(), s.owner(), p.held());
      return p.released();
    } catch (LockBackendException e) {
      if (e.kind() == LockBackendException.Kind.NODE_NOT_FOUND) {
        return p.released(); // the lock went away with the node
      }
      return p.problem(
          "cannot release the node locks " + s.keys() + " on " + t.node() + ": " + e.getMessage());
    }
  }

  /**
   * As {@link #done(Target, List, Progress, BindOutcome, FlowFailure, Optional)} with a failure of
   * the verdict's kind.
   */
  private BindResult done(
      Target t,
      List<String> keys,
      Progress p,
      BindOutcome outcome,
      String reason,
      Throwable cause,
      Optional<String> boundNode) {
    return done(t, keys, p, outcome, new Stop(outcome, reason, cause).failure(), boundNode);
  }

  /** The result; {@code failure} null exactly for {@link BindOutcome#BOUND}. */
  private BindResult done(
      Target t,
      List<String> keys,
      Progress p,
      BindOutcome outcome,
      FlowFailure failure,
      Optional<String> boundNode) {
    String reason = failure == null ? "" : failure.message();
    BindTimings d = p.timings();
    BindTimings timings =
        new BindTimings(
            d.lockWait(),
            d.refit(),
            d.annotate(),
            d.binding(),
            d.cleanup(),
            Duration.between(t.start(), clock.instant()));
    return new BindResult(
        outcome,
        t.ns(),
        t.name(),
        t.node(),
        p.devices(),
        p.source(),
        reason,
        boundNode,
        Optional.ofNullable(failure),
        timings,
        p.attempts(),
        keys,
        !p.held().isEmpty(),
        p.problems());
  }

  private Set<String> requestedVendors(PodRequests requests) {
    Set<String> out = new TreeSet<>();
    for (Map<String, ContainerDeviceRequest> m : requests.perContainer()) {
      out.addAll(m.keySet());
    }
    return out;
  }

  private List<String> lockKeys(PodRequests requests) {
    TreeSet<String> out = new TreeSet<>(registry.lockKeys(requests.pod()));
    for (String v : requestedVendors(requests)) {
      registry.vendor(v).flatMap(d -> d.nodeLockKey()).ifPresent(out::add);
    }
    return List.copyOf(out);
  }

  /** Builder for {@link PodBinder}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final ClusterReader reader;
    private final ClusterWriter writer;
    private final VendorRegistry registry;
    private final NodeLockProvider locks;
    private PodFitter fitter;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private NodeLockListener lockListener = NodeLockListener.NOOP;
    private NodeLockAcquirer acquirer;
    private boolean refitUnderLock = true;
    private Rescore rescore = Rescore.GANG_MEMBERS;
    private InstantSource clock = Clock.systemUTC();
    private int ambiguityRereads = 3;

    private Builder(
        ClusterReader reader,
        ClusterWriter writer,
        VendorRegistry registry,
        NodeLockProvider locks) {
      Objects.requireNonNull(reader, "reader");
      Objects.requireNonNull(writer, "writer");
      Objects.requireNonNull(registry, "registry");
      Objects.requireNonNull(locks, "locks");
      this.reader = reader;
      this.writer = writer;
      this.registry = registry;
      this.locks = locks;
    }

    /**
     * @param fitter the fitter for re-fits (its policies should match the Filter's); default {@code
     *     PodFitter.create(registry)} (HAMi defaults: device {@code spread}, node {@code binpack})
     * @return this
     */
    public Builder fitter(PodFitter fitter) {
      this.fitter = Objects.requireNonNull(fitter, "fitter");
      return this;
    }

    /**
     * @param policy gang lock retries (HAMi {@code --node-lock-retry-timeout}); default 100 ms / 28
     *     s
     * @return this
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * The listener of the bind flow's acquire loop ({@link NodeLockAcquirer}): it receives {@link
     * NodeLockListener#waited} once per bind that takes locks, on the binding thread, when the lock
     * wait ends (acquired or not), e.g. for wait-time metrics. Nothing needs it for correctness:
     * the acquire loop opens and closes its places in the wake-up queues itself. Combine several
     * with {@link NodeLockListener#all}.
     *
     * @param listener the listener (default {@link NodeLockListener#NOOP})
     * @return this
     */
    public Builder lockListener(NodeLockListener listener) {
      this.lockListener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * The acquire loop to use, built once by whoever assembles the lock stack (e.g.
     * hami-lock-k8s-bind's {@code KubernetesHamiStack}, which hands its one {@link
     * NodeLockAcquirer} to its binder). When set, {@link #retryPolicy} and {@link #lockListener}
     * are not used: they are the acquirer's.
     *
     * @param acquirer the gang-aware acquire loop
     * @return this
     */
    public Builder acquirer(NodeLockAcquirer acquirer) {
      this.acquirer = Objects.requireNonNull(acquirer, "acquirer");
      return this;
    }

    /**
     * @param on whether to re-check and re-fit the allocation under the lock (default true); false
     *     trusts the Filter's annotations as HAMi does and can over-commit
     * @return this
     */
    public Builder refitUnderLock(boolean on) {
      this.refitUnderLock = on;
      return this;
    }

    /**
     * @param which which pods have a still-fitting Filter allocation re-scored under the lock
     *     ({@link Rescore}; default {@link Rescore#GANG_MEMBERS}); no effect with {@link
     *     #refitUnderLock(boolean)} off
     * @return this
     */
    public Builder rescoreUnderLock(Rescore which) {
      this.rescore = Objects.requireNonNull(which, "which");
      return this;
    }

    /**
     * @param clock source of {@code hami.io/vgpu-time}/{@code bind-time} and of step durations
     * @return this
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * @param n re-reads of the pod after an ambiguous binding before reporting {@link
     *     BindOutcome#UNKNOWN} (default 3); at least 1
     * @return this
     */
    public Builder ambiguityRereads(int n) {
      checkArgument(n >= 1, "ambiguityRereads must be at least 1: %s", n);
      this.ambiguityRereads = n;
      return this;
    }

    /**
     * @return the binder
     */
    public PodBinder build() {
      return new PodBinder(this);
    }
  }
}
