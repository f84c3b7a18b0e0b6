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
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.internal.CheckedExecutor;
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
 * §2.3, §3.4), over the backend-neutral {@link ClusterReader}/{@link ClusterWriter} ports:
 *
 * <ol>
 *   <li>Read the pod (fresh). Missing or another UID ⇒ {@link BindOutcome#POD_NOT_FOUND}; bound
 *       already ⇒ answered by {@code RetriedBind} (BOUND for a retried bind of this flow, else
 *       {@link BindOutcome#ALREADY_BOUND}); unparsable requests ⇒ {@link BindOutcome#INVALID_POD}.
 *       A pod requesting no device, or whose devices kube-scheduler gave through DRA ({@code
 *       BindCall.Subject#of}), is bound without lock or annotations, as HAMi does; a DRA one has
 *       the Filter's allocation annotations removed first. A pod with only some vendors given
 *       through DRA is locked, fitted and annotated for the others alone (its claim is the node's
 *       usage; the Filter's allocation of the DRA vendors is removed in step 4).
 *   <li>Acquire every lock key its vendors need, in byte order with rollback, gang members ({@code
 *       scheduling.x-k8s.io/pod-group}) retrying under the {@link RetryPolicy} ({@code BindLocks}).
 *   <li>Under the locks, re-read the node, its pods and its DRA objects ({@code AllocationChoice};
 *       in parallel on {@link #bindAsync}'s executor, for a single lock its watch shows free
 *       already beside the lock's PATCH conditioned on that node {@code resourceVersion}: won at
 *       it, nobody held the lock since, {@link dev.hamilock.core.VersionedAcquire}) and choose the
 *       allocation: the Filter's if it still fits (re-scored for gang members, {@link Rescore}),
 *       else a re-fit, else {@link BindOutcome#DOES_NOT_FIT} with HAMi's reasons (spec §3.4 item
 *       5); a pod of another bind still waiting for its device plugin ⇒ {@link
 *       BindOutcome#CONTENDED} (the hand-off guard).
 *   <li>Write the allocation in one merge patch ({@code AllocationAnnotations#bindPatch}), with
 *       step 1's {@code resourceVersion} as a precondition; a pod changed since is re-read ({@link
 *       RetriedBind}). A pod with a Filter allocation and no DRA vendor has it written before step
 *       3, whose pod lists then ask for that write's version and whose DRA objects come from a
 *       snapshot confirmed for the node's pods ({@link ClusterReader#readDraForFilter}), and again
 *       after step 3 only if it chose otherwise.
 *   <li>Confirm every lock is still this pod's in the store ({@code BindLocks}: one read of the
 *       node for all keys; after a first write on {@link #bindAsync}'s executor, beside step 3's
 *       pod LISTs, and again if that began over 1 s before the Binding); lost ⇒ {@link
 *       BindOutcome#CONTENDED}.
 *   <li>POST the Binding ({@code BindingPost}) with the pod's UID and the resourceVersion step 4
 *       returned as preconditions: BOUND keeps the locks for the device plugin; a pod written since
 *       fails plainly (409, {@link FlowFailure.Kind#CONFLICT}); an ambiguous answer (HAMi#2645) is
 *       resolved by re-reading the pod, and a pod read unbound at that resourceVersion is moved
 *       past it before its locks are released, so that a POST kube-apiserver still holds can never
 *       bind it late ({@code AmbiguousBinding}).
 * </ol>
 *
 * Every other end runs the {@code Cleanup}: clear (or restore) the allocation annotations, release
 * the locks by exact owner. {@link #bind} never throws for cluster, lock or data problems; its
 * {@link BindResult#failure()} ({@link FlowFailure}) carries the kind, HTTP status and cause.
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
    ForwardingCluster ports = StackPorts.checked(b.reader, b.writer);
    this.reader = ports;
    this.writer = ports;
    this.registry = b.registry;
    this.fitter = b.fitter != null ? b.fitter : PodFitter.create(b.registry);
    this.clock = b.clock;
    this.locks =
        new BindLocks(
            b.locks,
            b.acquirer != null
                ? b.acquirer
                : NodeLockAcquirer.create(
                    LockSettings.builder().retryPolicy(b.retryPolicy).build()));
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
    this.retried = new RetriedBind(fitter, registry, reader, cleanup);
    this.binding =
        new BindingPost(
            writer, locks, cleanup, new AmbiguousBinding(reader, cleanup, b.ambiguityRereads));
  }

  /**
   * @return a builder with HAMi's retry defaults (100 ms poll, 28 s), re-fit under the lock on, the
   *     system UTC clock and 3 re-reads after an ambiguous binding
   * @throws NullPointerException naming a null argument
   */
  public static Builder builder(
      ClusterReader reader, ClusterWriter writer, VendorRegistry registry, NodeLockProvider locks) {
    return new Builder(reader, writer, registry, locks);
  }

  /** {@return whether the allocation is checked and re-fitted under the lock} */
  public boolean refitUnderLock() {
    return allocation.refitUnderLock();
  }

  /** {@return which pods have a still-fitting Filter allocation re-scored under the lock} */
  public Rescore rescoreUnderLock() {
    return allocation.rescore();
  }

  /**
   * Which pods have a still-fitting Filter allocation re-scored under the lock: pods filtered on
   * one snapshot (a gang's members) all get the same devices, so the fresh fit's choice is written
   * when it differs ({@link AllocationSource#RESCORED}). Needs {@link Builder#refitUnderLock} on.
   */
  public enum Rescore {
    /** Keep every Filter allocation that still fits (HAMi's behaviour). */
    OFF,
    /** Re-score gang members only (the default): a pod outside a gang keeps its Filter's. */
    GANG_MEMBERS,
    /** Re-score every pod. */
    ALL
  }

  /**
   * Binds a pod to a node (HAMi extender {@code Bind(podName, namespace, uid, node)}).
   *
   * @param uid the pod's UID as kube-scheduler passes it; "" to accept any incarnation
   * @param node the chosen node; non-blank
   * @return the typed result; never null
   * @throws NullPointerException naming a null argument
   * @throws IllegalArgumentException naming a blank namespace, name or node
   */
  public BindResult bind(String namespace, String name, String uid, String node) {
    try {
      return run(call(namespace, name, uid, node), null).join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      } else if (e.getCause() instanceof Error r) {
        throw r;
      }
      throw e;
    }
  }

  private BindCall call(String namespace, String name, String uid, String node) {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    requireNonBlank(node, "node");
    Objects.requireNonNull(uid, "uid");
    return new BindCall(namespace, name, uid, node, clock);
  }

  /**
   * {@link #bind} on {@code executor}, holding no thread while a gang member waits for its lock
   * ({@link NodeLockAcquirer#acquireAsync}); an attempt {@code executor} rejects ends the bind
   * {@link BindOutcome#FAILED}, cleaned up.
   *
   * @return the future result; completed exceptionally only with {@link RejectedExecutionException}
   *     when the first step is rejected (an executor's other unchecked exception is a rejection,
   *     its cause, wherever it is thrown)
   * @throws NullPointerException as {@link #bind}, or for a null executor
   * @throws IllegalArgumentException as {@link #bind}
   */
  public CompletableFuture<BindResult> bindAsync(
      String namespace, String name, String uid, String node, Executor executor) {
    BindCall c = call(namespace, name, uid, node);
    Executor checked = CheckedExecutor.of(executor); // its other unchecked exceptions: rejections
    try {
      return CompletableFuture.supplyAsync(() -> run(c, checked), checked).thenCompose(f -> f);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Steps 1 and 2; a null {@code executor} blocks this thread for the locks. */
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
    PodRequests asked;
    try {
      asked = fitter.requests(cp.view());
    } catch (InvalidPodRequestException e) {
      c.subject(Subject.unparsed(cp.view()));
      return done(cleanup.fail(c, new Stop(BindOutcome.INVALID_POD, e.getMessage(), e)));
    }
    Subject s = Subject.of(cp.view(), asked, registry);
    c.subject(s);
    if (allocation.refitUnderLock() && s.dra().isEmpty()) {
      c.writeFirst =
          AllocationAnnotations.recorded(
              registry, s.vendors(), s.pod(), c.node, new StringBuilder());
    }
    if (s.needsNothing()) { // HAMi binds device-less pods without either
      Optional<Stop> stop =
          s.draRoute() && AllocationAnnotations.hasAny(registry, s.annotated(), s.pod())
              ? annotate(c)
              : Optional.empty();
      return done(stop.isPresent() ? cleanup.fail(c, stop.get()) : binding.post(c));
    }
    CompletableFuture<Optional<Stop>> stop =
        s.keys().isEmpty()
            ? CompletableFuture.completedFuture(Optional.empty())
            : locks.acquire(
                c, executor, v -> c.early = Optional.of(allocation.start(c, v, executor)));
    return stop.thenApply(
        t -> t.isPresent() ? cleanup.fail(c, t.get()) : underLocks(c, s.served(), executor));
  }

  private static CompletableFuture<BindResult> done(BindResult r) {
    return CompletableFuture.completedFuture(r);
  }

  /** Steps 3 to 6, the locks held; all the call's state is on {@code c} (maybe another thread). */
  private BindResult underLocks(BindCall c, PodRequests requests, Executor executor) {
    Optional<Stop> stop;
    try {
      stop =
          c.writeFirst.isPresent()
              ? writeFirst(c, requests, executor)
              : allocation.choose(c, requests, executor).or(() -> annotate(c));
    } catch (RuntimeException e) { // a bug here (ports are checked): a failure, cleaned up
      String why = "binding pod %s to %s failed: %s".formatted(c.podKey(), c.node, e);
      stop = Optional.of(new Stop(BindOutcome.FAILED, why, e));
    }
    if (c.boundMeanwhile.isPresent()) {
      locks.settle(c); // the lock may stay for the hand-off: no confirmation after the answer
      return retried.boundMeanwhile(c, c.boundMeanwhile.get());
    }
    return stop.isPresent() ? cleanup.fail(c, stop.get()) : binding.post(c);
  }

  /**
   * Steps 4 then 3 for a pod with a Filter allocation and no DRA vendor: the Filter's allocation is
   * written first, so the usage reads can ask for that write's version (a pod LIST served from the
   * watch cache, not one waiting for etcd's progress notification after the lock's node write),
   * then checked as in step 3 and written again if step 3 chooses otherwise; every other end clears
   * it ({@code Cleanup}). Unbound, the pod is no device plugin's to serve meanwhile.
   */
  private Optional<Stop> writeFirst(BindCall c, PodRequests requests, Executor executor) {
    c.allocated(c.writeFirst.orElseThrow(), AllocationSource.FILTER_KEPT);
    String before = c.podVersion;
    Optional<Stop> stop = annotate(c);
    if (stop.isPresent() || c.boundMeanwhile.isPresent()) {
      return stop;
    }
    // a write that changed nothing keeps the pod's old version: no proof, list consistently
    c.listedAt = Optional.of(c.podVersion).filter(v -> !v.isEmpty() && !v.equals(before));
    if (executor != null) { // step 5 beside the pod LISTs: the allocation is on the pod
      c.confirmation = Optional.of(locks.confirmBeside(c, executor));
    }
    return allocation
        .choose(c, requests, executor)
        .or(() -> c.source == AllocationSource.FILTER_KEPT ? Optional.empty() : annotate(c));
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
              ? AllocationAnnotations.clearPatch(
                  registry, s.annotated(), s.pod().uid(), c.podVersion)
              : AllocationAnnotations.bindPatch(
                  registry,
                  s.pod(),
                  s.dra(),
                  c.node,
                  c.devices.orElseThrow(),
                  c.now(),
                  c.podVersion);
      c.written = Optional.of(patch); // may be applied even if the answer is lost
      c.podVersion = writer.patchPodMetadata(c.ns, c.name, patch).resourceVersion();
      c.applied = c.written;
      return Optional.empty();
    } catch (ClusterException e) {
      if (e.kind() != ClusterException.Kind.UNAVAILABLE) { // else it may have been applied
        c.written = c.applied; // an earlier write of this call (write-first) is still on the pod
      }
      if (e.kind() == ClusterException.Kind.CONFLICT) {
        return retried.changedMeanwhile(c, e);
      }
      if (e.kind() == ClusterException.Kind.NOT_FOUND) {
        String why =
            "pod %s disappeared before its allocation was written or cleared: %s"
                .formatted(c.podKey(), e.getMessage());
        return Optional.of(new Stop(BindOutcome.POD_NOT_FOUND, why, e));
      }
      String what =
          s.draRoute() ? "clear the Filter's allocation of DRA-route" : "write the allocation of";
      String why = "cannot %s pod %s: %s".formatted(what, c.podKey(), e.getMessage());
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
      this.reader = Objects.requireNonNull(reader, "reader");
      this.writer = Objects.requireNonNull(writer, "writer");
      this.registry = Objects.requireNonNull(registry, "registry");
      this.locks = Objects.requireNonNull(locks, "locks");
    }

    /** The re-fit's fitter, policies as the Filter's (default {@code PodFitter.create}). */
    public Builder fitter(PodFitter fitter) {
      this.fitter = Objects.requireNonNull(fitter, "fitter");
      return this;
    }

    /** Gang lock retries (HAMi {@code --node-lock-retry-timeout}; default 100 ms / 28 s). */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * The stack's gang-aware acquire loop (its listener hears {@link NodeLockListener#waited}); it
     * replaces {@link #retryPolicy}.
     */
    public Builder acquirer(NodeLockAcquirer acquirer) {
      this.acquirer = Objects.requireNonNull(acquirer, "acquirer");
      return this;
    }

    /** Re-fit under the lock (default true); false trusts the Filter as HAMi does. */
    public Builder refitUnderLock(boolean on) {
      this.refitUnderLock = on;
      return this;
    }

    /** {@link Rescore}, default {@link Rescore#GANG_MEMBERS}. */
    public Builder rescoreUnderLock(Rescore which) {
      this.rescore = Objects.requireNonNull(which, "which");
      return this;
    }

    /** Source of {@code hami.io/vgpu-time}/{@code bind-time} and step durations. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Re-reads after an ambiguous binding before {@link BindOutcome#UNKNOWN} (default 3, &ge; 1).
     */
    public Builder ambiguityRereads(int n) {
      checkArgument(n >= 1, "ambiguityRereads must be at least 1: %s", n);
      this.ambiguityRereads = n;
      return this;
    }

    /** {@return the binder} */
    public PodBinder build() {
      return new PodBinder(this);
    }
  }
}
