package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import java.time.Clock;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

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
 *       without lock or annotations, as HAMi does. So is a pod whose every requested vendor's
 *       devices kube-scheduler gave through DRA ({@code status.extendedResourceClaimStatus}, issue
 *       28): no device plugin {@code Allocate} follows to release a lock, and the HAMi allocation
 *       annotations its Filter wrote ({@code hami.io/vgpu-node}, to-allocate, allocated) are
 *       removed in one merge patch before the Binding (the keys clean-up removes), so that usage
 *       counts its card once, as its ResourceClaim, and no device plugin takes it for a pending
 *       pod. HAMi's Bind ({@code pkg/scheduler/scheduler.go}), which reads no DRA status, locks the
 *       node for it (held until it expires), sets {@code hami.io/bind-phase: allocating} (so HAMi's
 *       {@code GetPendingPod} fallback can pick it, {@code pkg/util/util.go}) and keeps the
 *       annotations (its usage counts the card by them; the DRA allocator, by the claim).
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
 *       Filter like HAMi. <em>Hand-off guard</em> (issue 23), in both modes and before any write:
 *       another pod of that list not bound elsewhere, Pending, bind phase {@code allocating}, with
 *       a {@code hami.io/bind-time} less than the lock timeout from now, is still waiting for the
 *       device plugin without the lock — its lock was removed after its binder's confirmation (step
 *       5) — and HAMi's plugin, which finds the pod to serve through the lock holder or else as the
 *       first such pod (spec §3.1), would serve each pod the other's allocation ⇒ {@link
 *       BindOutcome#CONTENDED} (retryable), cleaned up, no Binding. An older, absent or unparsable
 *       (WARN once per value) bind time, a pod Running, finished or being deleted, or bind phase
 *       {@code success}/{@code failed} does not block, so a pod left {@code allocating} (HAMi's Go
 *       binder leaves it so when its Binding fails) holds the node back one lock timeout at most.
 *       No extra request: it reads the list the re-fit reads.
 *   <li>Write the allocation in one merge patch: every vendor's to-allocate and allocated keys
 *       (same text), {@code hami.io/vgpu-node} (+ the same-named label), {@code hami.io/vgpu-time},
 *       {@code hami.io/bind-phase: allocating}, {@code hami.io/bind-time} (Unix seconds), with the
 *       {@code resourceVersion} step 1 read as a precondition (issue 23): a pod changed since (e.g.
 *       bound and served by this bind's first call while kube-scheduler retried it) is re-read —
 *       bound ⇒ answered as in step 1, its allocation untouched; else {@link
 *       BindOutcome#CONTENDED}. The clean-up's patches carry the last version this call saw too and
 *       never clear what someone wrote after it.
 *   <li>Confirm every lock is still this pod's in the store ({@link NodeLock#stillHeld}: one read
 *       of the exact value written while it is under half the lock timeout old, else a
 *       compare-and-set re-stamp of it — one request per lock key; before issue 23 a young lock was
 *       confirmed from this process's memory, no request, so a lock removed by another writer went
 *       unnoticed for up to half the lock timeout): a bind stalled past the lock timeout may have
 *       lost it to a takeover (an unbound holder is not protected by the HAMi#3096 guard), an
 *       operator or HAMi's Go scheduler may have removed it and another pod acquired it ⇒ {@link
 *       BindOutcome#CONTENDED}, cleaned up, no Binding. A Binding cannot be made conditional on a
 *       node annotation, so the lock can still be removed between this confirmation and the Binding
 *       (one round trip). The next holder's binder then sees this pod in flight (step 3: this pod's
 *       allocation was written before the confirmation, hence before the removal and the next
 *       acquire) and does not bind, so the device plugin serves this pod its own allocation through
 *       its list rule. What remains: this pod's {@code Allocate} arriving while that binder holds
 *       the freed lock (two round trips: its usage read, then clean-up and release), where HAMi's
 *       plugin serves this pod the holder's Filter allocation or fails ({@code hami-lock-doctor
 *       audit} AU07 reports the pod left {@code allocating}); and a next holder that does not check
 *       (HAMi's Go binder), which can still cause a mutual swap.
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
  private final ClusterReader reader;
  private final ClusterWriter writer;
  private final VendorRegistry registry;
  private final PodFitter fitter;
  private final InstantSource clock;
  private final RetriedBind retried;
  private final BindLocks locks;
  private final AllocationChoice allocation;
  private final Cleanup cleanup;
  private final BindingPost binding;

  private PodBinder(Builder b) {
    this.reader = b.reader;
    this.writer = b.writer;
    this.registry = b.registry;
    this.fitter = b.fitter != null ? b.fitter : PodFitter.create(b.registry);
    this.clock = b.clock;
    this.retried = new RetriedBind(fitter, registry);
    this.locks =
        new BindLocks(
            b.locks,
            b.acquirer != null
                ? b.acquirer
                : NodeLockAcquirer.create(
                    LockSettings.builder()
                        .retryPolicy(b.retryPolicy)
                        .listener(b.lockListener)
                        .build()));
    this.allocation =
        new AllocationChoice(
            reader,
            registry,
            fitter,
            new UsageReconstructor(registry, b.clock),
            b.refitUnderLock,
            b.rescore,
            ConcurrentHashMap.newKeySet());
    this.cleanup = new Cleanup(reader, writer, registry, locks);
    this.binding =
        new BindingPost(
            writer, locks, cleanup, new AmbiguousBinding(reader, cleanup, b.ambiguityRereads));
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
    return allocation.refitUnderLock();
  }

  /**
   * @return which pods have a still-fitting Filter allocation re-scored under the lock
   */
  public Rescore rescoreUnderLock() {
    return allocation.rescore();
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
    try {
      return run(new BindCall(namespace, name, uid, node, clock), null).join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      } else if (e.getCause() instanceof Error r) {
        throw r;
      }
      throw e;
    }
  }

  /**
   * {@link #bind} on {@code executor}, holding no thread while a gang member waits for its node
   * lock (issue 25 item 3): the lock attempts and every step are tasks on {@code executor}; the
   * wait between attempts is a release callback or a timer ({@link NodeLockAcquirer#acquireAsync}).
   * An attempt {@code executor} rejects ends the bind {@link BindOutcome#FAILED}, cleaned up.
   *
   * @param namespace the pod's namespace
   * @param name the pod's name
   * @param uid the pod's UID, "" for any
   * @param node the chosen node
   * @param executor runs the flow's steps (a few round trips each, never a lock wait); bounded
   * @return the future result; completed exceptionally only with {@link RejectedExecutionException}
   *     when the first step is rejected
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
    BindCall c = new BindCall(namespace, name, uid, node, clock);
    try {
      return CompletableFuture.supplyAsync(() -> run(c, executor), executor).thenCompose(f -> f);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Steps 1 and 2: read and check the pod, take its locks ({@link BindLocks#acquire}: blocking on
   * this thread for a null {@code executor}).
   */
  private CompletableFuture<BindResult> run(BindCall c, Executor executor) {
    ClusterPod cp;
    try {
      cp = reader.readPod(c.ns, c.name).orElse(null);
    } catch (ClusterException e) {
      String why = "cannot read pod " + c.podKey() + ": " + e.getMessage();
      return done(c.stopped(new Stop(BindOutcome.FAILED, why, e), Optional.empty()));
    }
    if (cp == null || (!c.uid.isEmpty() && !c.uid.equals(cp.view().uid()))) {
      String why =
          cp == null
              ? "pod " + c.podKey() + " not found"
              : "pod " + c.podKey() + " has uid " + cp.view().uid() + ", not " + c.uid;
      return done(c.stopped(new Stop(BindOutcome.POD_NOT_FOUND, why, null), Optional.empty()));
    }
    if (cp.isBound()) {
      return done(retried.answer(c, cp));
    }
    c.podVersion = cp.resourceVersion();
    PodRequests requests;
    try {
      requests = fitter.requests(cp.view());
    } catch (InvalidPodRequestException e) {
      c.subject(Subject.unparsed(cp.view()));
      return done(cleanup.fail(c, new Stop(BindOutcome.INVALID_POD, e.getMessage(), e)));
    }
    c.subject(Subject.of(cp.view(), requests, registry));
    if (c.subject().needsNothing(requests)) { // HAMi binds device-less pods without either
      Subject s = c.subject();
      Optional<Stop> stop =
          s.draRoute() && AllocationAnnotations.hasAny(registry, s.vendors(), s.pod())
              ? annotate(c)
              : Optional.empty();
      return done(stop.isPresent() ? cleanup.fail(c, stop.get()) : binding.post(c));
    }
    CompletableFuture<Optional<Stop>> stop =
        c.subject().keys().isEmpty()
            ? CompletableFuture.completedFuture(Optional.empty())
            : locks.acquire(c, executor);
    return stop.thenApply(
        s -> s.isPresent() ? cleanup.fail(c, s.get()) : underLocks(c, requests, executor));
  }

  private static CompletableFuture<BindResult> done(BindResult r) {
    return CompletableFuture.completedFuture(r);
  }

  /**
   * Steps 3 to 6, the locks held. Everything the call holds is on {@code c}, none on this stack: a
   * lock wait that completes later (without a thread, issue 25 item 3) continues here.
   */
  private BindResult underLocks(BindCall c, PodRequests requests, Executor executor) {
    Optional<Stop> stop = allocation.choose(c, requests, executor).or(() -> annotate(c));
    if (c.boundMeanwhile.isPresent()) {
      return boundMeanwhile(c, c.boundMeanwhile.get());
    }
    return stop.isPresent() ? cleanup.fail(c, stop.get()) : binding.post(c);
  }

  /**
   * The pod was bound by someone else after step 1 (e.g. kube-scheduler retried this bind while its
   * first call went on, kubernetes#96579): answered as a retried bind, nothing written or cleared;
   * the locks stay for a hand-off still to come (bind phase {@code allocating}), else go.
   */
  private BindResult boundMeanwhile(BindCall c, ClusterPod cp) {
    BindResult r = retried.answer(c, cp);
    boolean handoffToCome =
        r.outcome() == BindOutcome.BOUND
            && AllocationAnnotations.PHASE_ALLOCATING.equals(
                cp.view().annotations().get(HamiAnnotations.BIND_PHASE));
    return handoffToCome ? r : Uninterrupted.call(() -> cleanup.releaseOnly(c, r));
  }

  /**
   * The allocation patch met a pod changed since this call read it: nothing was written. Re-read
   * once: bound ⇒ {@link #boundMeanwhile}; else contention, decided again on the next attempt.
   */
  private Optional<Stop> changedMeanwhile(BindCall c, ClusterException conflict) {
    try {
      Optional<ClusterPod> now = reader.readPod(c.ns, c.name);
      if (now.isPresent() && now.get().isBound()) {
        c.boundMeanwhile = now;
        return Optional.empty();
      }
    } catch (ClusterException e) {
      String why = "cannot re-read pod " + c.podKey() + " after a conflict: " + e.getMessage();
      return Optional.of(new Stop(BindOutcome.FAILED, why, e));
    }
    String why =
        "pod "
            + c.podKey()
            + " changed since it was read ("
            + conflict.getMessage()
            + "): its allocation is decided again on the next attempt";
    return Optional.of(new Stop(BindOutcome.CONTENDED, why, conflict));
  }

  /**
   * Step 4: writes the allocation annotations in one merge patch; for a DRA-route pod, removes the
   * Filter's in one merge patch (the keys {@link Cleanup} removes).
   */
  private Optional<Stop> annotate(BindCall c) {
    Instant began = c.now();
    Subject s = c.subject();
    try {
      MetadataPatch patch =
          s.draRoute()
              ? AllocationAnnotations.clearPatch(registry, s.vendors(), s.pod().uid(), c.podVersion)
              : AllocationAnnotations.bindPatch(
                  registry, s.pod(), c.node, c.devices.orElseThrow(), c.now(), c.podVersion);
      c.written = Optional.of(patch); // may be applied even if the answer is lost
      c.podVersion = writer.patchPodMetadata(c.ns, c.name, patch).resourceVersion();
      c.annotated = !s.draRoute();
      return Optional.empty();
    } catch (ClusterException e) {
      if (e.kind() == ClusterException.Kind.CONFLICT) {
        c.written = Optional.empty(); // nothing written
        return changedMeanwhile(c, e);
      }
      c.annotated = e.kind() == ClusterException.Kind.UNAVAILABLE; // may have been applied
      if (e.kind() == ClusterException.Kind.NOT_FOUND) {
        String why =
            "pod "
                + c.podKey()
                + " disappeared before its allocation was written or cleared: "
                + e.getMessage();
        return Optional.of(new Stop(BindOutcome.POD_NOT_FOUND, why, e));
      }
      String why =
          (s.draRoute()
                  ? "cannot clear the Filter's allocation of DRA-route pod "
                  : "cannot write the allocation of pod ")
              + c.podKey()
              + ": "
              + e.getMessage();
      return Optional.of(new Stop(BindOutcome.FAILED, why, e));
    } finally {
      c.took(Phase.ANNOTATE, began);
    }
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
     *     trusts the Filter's annotations as HAMi does and can over-commit (the hand-off guard of
     *     step 3 stays on)
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
