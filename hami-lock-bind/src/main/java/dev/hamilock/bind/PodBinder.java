package dev.hamilock.bind;

import dev.hamilock.bind.cluster.BindingOutcome;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
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
 * The HAMi-compatible bind flow, safer than HAMi's ({@code pkg/scheduler/scheduler.go} Bind,
 * spec §2.3, §3.4), over the backend-neutral {@link ClusterReader}/{@link ClusterWriter} ports.
 *
 * <ol>
 *   <li>Read the pod (fresh). Missing or another UID ⇒ {@link BindOutcome#POD_NOT_FOUND}; already
 *       bound to this node by this flow (a bind kube-scheduler retried after it went through,
 *       kubernetes#96579: {@code hami.io/vgpu-node} = the node, bind phase {@code allocating} or
 *       {@code success}, bind time set, every requested vendor's allocation decodes to the
 *       requested device counts; or a pod requesting no device) ⇒ {@link BindOutcome#BOUND} with
 *       an empty reason and {@link AllocationSource#ALREADY_RECORDED}, no lock taken, nothing
 *       written; bound elsewhere, or here without that allocation ⇒
 *       {@link BindOutcome#ALREADY_BOUND}; unparsable requests ⇒ {@link BindOutcome#INVALID_POD}.
 *       A pod requesting no device is bound without lock or annotations, as HAMi does.</li>
 *   <li>Acquire every lock key its vendors need — {@code DeviceVendor.nodeLockKey()} of each vendor
 *       whose {@code needsLock} holds, and (<em>improvement</em>, spec §7.12) of each vendor requested
 *       only by init containers — in byte order with rollback, gang members
 *       ({@code scheduling.x-k8s.io/pod-group} label) retrying under the {@link RetryPolicy}
 *       ({@link NodeLockAcquirer}).</li>
 *   <li>Under the locks, re-read the node and every pod whose {@code hami.io/vgpu-node} names it
 *       (the pod itself excluded) and rebuild the usage (fail closed). <em>Improvement</em> (HAMi's
 *       Filter assigns devices with no lock, so two schedulers over-commit, spec §3.4 item 5):
 *       if the Filter's allocation recorded on the pod for this node still fits, keep it; else
 *       re-fit on this node; else {@link BindOutcome#DOES_NOT_FIT} with HAMi's reasons. Can be
 *       switched off ({@link Builder#refitUnderLock(boolean)}), which trusts the Filter like HAMi.</li>
 *   <li>Write the allocation in one merge patch: every vendor's to-allocate and allocated keys
 *       (same text), {@code hami.io/vgpu-node} (+ the same-named label), {@code hami.io/vgpu-time},
 *       {@code hami.io/bind-phase: allocating}, {@code hami.io/bind-time} (Unix seconds).</li>
 *   <li>Confirm every lock is still this pod's ({@link NodeLock#stillHeld}: free while the lock is
 *       under half the lock timeout old, else a compare-and-set re-stamp of the exact value
 *       written): a bind stalled past the lock timeout may
 *       have lost it to a takeover (an unbound holder is not protected by the HAMi#3096 guard) ⇒
 *       {@link BindOutcome#CONTENDED}, cleaned up, no Binding.</li>
 *   <li>POST the Binding. Bound ⇒ {@link BindOutcome#BOUND}, locks kept for the device plugin.
 *       Ambiguous (timeout, 5xx; HAMi#2645) ⇒ re-read the pod: bound to the node ⇒ BOUND; not
 *       bound ⇒ clean up; unreadable ⇒ {@link BindOutcome#UNKNOWN}, everything left in place.</li>
 * </ol>
 * Every failure clears the allocation annotations (or restores them if the pod turned out bound
 * elsewhere) and then releases the locks by exact owner. {@link #bind} never throws for cluster,
 * lock or data problems; it returns a typed {@link BindResult}. Contention is logged at DEBUG.
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
  private final NodeLocks locks;
  private final NodeLockAcquirer acquirer;
  private final boolean refitUnderLock;
  private final InstantSource clock;
  private final int ambiguityRereads;

  private PodBinder(Builder b) {
    this.reader = b.reader;
    this.writer = b.writer;
    this.registry = b.registry;
    this.fitter = b.fitter != null ? b.fitter : PodFitter.create(b.registry);
    this.usage = new UsageReconstructor(b.registry);
    this.locks = b.locks;
    this.acquirer = NodeLockAcquirer.create(b.retryPolicy, b.lockListener);
    this.refitUnderLock = b.refitUnderLock;
    this.clock = b.clock;
    this.ambiguityRereads = b.ambiguityRereads;
  }

  /**
   * @param reader fresh reads (see {@link ClusterReader}'s freshness contract)
   * @param writer pod patches and bindings
   * @param registry the enabled device vendors
   * @param locks the node lock of each lock key
   * @return a builder with HAMi's retry defaults (100 ms poll, 28 s), re-fit under the lock on,
   *     the system UTC clock and 3 re-reads after an ambiguous binding
   * @throws IllegalArgumentException naming a null argument
   */
  public static Builder builder(ClusterReader reader, ClusterWriter writer, VendorRegistry registry, NodeLocks locks) {
    return new Builder(reader, writer, registry, locks);
  }

  /** @return whether the allocation is checked and re-fitted under the lock */
  public boolean refitUnderLock() {
    return refitUnderLock;
  }

  /**
   * Binds a pod to a node (HAMi extender {@code Bind(podName, namespace, uid, node)}).
   *
   * @param namespace the pod's namespace; non-blank
   * @param name the pod's name; non-blank
   * @param uid the pod's UID as kube-scheduler passes it; "" to accept any incarnation
   * @param node the chosen node; non-blank
   * @return the typed result; never null
   * @throws IllegalArgumentException naming a null or blank argument
   */
  public BindResult bind(String namespace, String name, String uid, String node) {
    requireName("namespace", namespace);
    requireName("name", name);
    requireName("node", node);
    if (uid == null) {
      throw new IllegalArgumentException("uid must not be null (use \"\" for any)");
    }
    return new Call(namespace, name, uid, node).run();
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
   * @throws IllegalArgumentException as {@link #bind}, or for a null executor
   */
  public CompletableFuture<BindResult> bindAsync(String namespace, String name, String uid, String node,
      Executor executor) {
    requireName("namespace", namespace);
    requireName("name", name);
    requireName("node", node);
    if (uid == null || executor == null) {
      throw new IllegalArgumentException("uid and executor must not be null");
    }
    try {
      return CompletableFuture.supplyAsync(() -> bind(namespace, name, uid, node), executor);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // ------------------------------------------------------------------------------------------

  /** State of one bind call. */
  private final class Call {
    final String ns;
    final String name;
    final String uid;
    final String node;
    final Instant start;
    Duration lockWait = Duration.ZERO;
    Duration refit = Duration.ZERO;
    Duration annotate = Duration.ZERO;
    Duration binding = Duration.ZERO;
    Duration cleanup = Duration.ZERO;
    Instant bindingStart;
    int attempts;
    List<String> keys = List.of();
    List<NodeLock> held = List.of();
    LockOwner owner;
    PodView before;
    Set<String> vendors = Set.of();
    PodDevices devices;
    AllocationSource source = AllocationSource.NONE;
    boolean annotated;
    final List<String> problems = new ArrayList<>();

    Call(String ns, String name, String uid, String node) {
      this.ns = ns;
      this.name = name;
      this.uid = uid;
      this.node = node;
      this.start = clock.instant();
    }

    BindResult run() {
      ClusterPod cp;
      try {
        cp = reader.readPod(ns, name).orElse(null);
      } catch (ClusterException e) {
        return fail(BindOutcome.FAILED, "cannot read pod " + ns + "/" + name + ": " + e.getMessage(), e);
      }
      if (cp == null) {
        return done(BindOutcome.POD_NOT_FOUND, "pod " + ns + "/" + name + " not found", null, Optional.empty());
      }
      if (!uid.isEmpty() && !uid.equals(cp.view().uid())) {
        return done(BindOutcome.POD_NOT_FOUND, "pod " + ns + "/" + name + " has uid " + cp.view().uid() + ", not " + uid,
            null, Optional.empty());
      }
      if (cp.isBound()) {
        String boundTo = cp.nodeName().get();
        if (!boundTo.equals(node)) {
          return done(BindOutcome.ALREADY_BOUND, "pod " + ns + "/" + name + " is already bound to node "
              + boundTo + ", not " + node, null, cp.nodeName());
        }
        Optional<String> inconsistent = boundHereByThisFlow(cp.view());
        if (inconsistent.isPresent()) {
          return done(BindOutcome.ALREADY_BOUND, "pod " + ns + "/" + name + " is already bound to node "
              + boundTo + " but not by this bind flow: " + inconsistent.get(), null, cp.nodeName());
        }
        LOG.debug("pod {}/{} is already bound to node {} by this flow: retried bind answered as bound "
            + "(kubernetes#96579), no lock taken", ns, name, node);
        return done(BindOutcome.BOUND, "", null, cp.nodeName());
      }
      before = cp.view();
      PodRequests requests;
      try {
        requests = fitter.requests(before);
      } catch (InvalidPodRequestException e) {
        return fail(BindOutcome.INVALID_POD, e.getMessage(), e);
      }
      vendors = requestedVendors(requests);
      keys = lockKeys(requests);
      if (!requests.requestsDevices() && keys.isEmpty()) {
        return postBinding(); // HAMi binds device-less pods without lock or annotations
      }
      owner = before.uid().isBlank() ? LockOwner.of(ns, name) : LockOwner.of(ns, name, before.uid());
      if (!keys.isEmpty()) {
        BindResult failed = acquire();
        if (failed != null) {
          return failed;
        }
      }
      Instant t = clock.instant();
      BindResult failed = chooseAllocation(requests);
      refit = Duration.between(t, clock.instant());
      if (failed != null) {
        return failed;
      }
      t = clock.instant();
      try {
        writer.patchPodMetadata(ns, name, AllocationAnnotations.bindPatch(registry, before, node, devices, clock.instant()));
        annotated = true;
      } catch (ClusterException e) {
        annotated = e.kind() == ClusterException.Kind.UNAVAILABLE; // may have been applied
        annotate = Duration.between(t, clock.instant());
        if (e.kind() == ClusterException.Kind.NOT_FOUND) {
          return fail(BindOutcome.POD_NOT_FOUND, "pod " + ns + "/" + name + " disappeared before its allocation was written: "
              + e.getMessage(), e);
        }
        return fail(BindOutcome.FAILED, "cannot write the allocation of pod " + ns + "/" + name + ": " + e.getMessage(), e);
      }
      annotate = Duration.between(t, clock.instant());
      return postBinding();
    }

    /**
     * Whether a pod bound to {@link #node} carries this flow's allocation for it (a retried bind,
     * kubernetes#96579): a pod requesting no device needs nothing; otherwise
     * {@code hami.io/vgpu-node} names the node, the bind phase is {@code allocating} or
     * {@code success}, {@code hami.io/bind-time} is set and every requested vendor's allocated
     * annotation decodes to one entry per container with as many devices as requested.
     *
     * @return empty if consistent, else what is missing or inconsistent
     */
    private Optional<String> boundHereByThisFlow(PodView pod) {
      PodRequests requests;
      try {
        requests = fitter.requests(pod);
      } catch (InvalidPodRequestException e) {
        return Optional.of("its requests cannot be parsed: " + e.getMessage());
      }
      Set<String> requested = requestedVendors(requests);
      if (!requests.requestsDevices() && lockKeys(requests).isEmpty()) {
        return Optional.empty();
      }
      String assigned = pod.annotations().get(HamiAnnotations.VGPU_NODE);
      if (!node.equals(assigned)) {
        return Optional.of(HamiAnnotations.VGPU_NODE + "=" + assigned);
      }
      String phase = pod.annotations().get(HamiAnnotations.BIND_PHASE);
      if (!AllocationAnnotations.PHASE_ALLOCATING.equals(phase) && !AllocationAnnotations.PHASE_SUCCESS.equals(phase)) {
        return Optional.of(HamiAnnotations.BIND_PHASE + "=" + phase);
      }
      if (!pod.annotations().containsKey(HamiAnnotations.BIND_TIME)) {
        return Optional.of(HamiAnnotations.BIND_TIME + " absent");
      }
      StringBuilder problem = new StringBuilder();
      Optional<PodDevices> rec = AllocationAnnotations.recorded(registry, requested, pod, node, problem);
      if (rec.isEmpty()) {
        return Optional.of(problem.length() > 0 ? problem.toString() : "an allocated annotation is absent");
      }
      List<Map<String, ContainerDeviceRequest>> per = requests.perContainer();
      for (String v : requested) {
        List<List<ContainerDevice>> entries = rec.get().forVendor(v);
        if (entries.size() != per.size()) {
          return Optional.of("the " + v + " allocation has " + entries.size() + " container entries, the pod has "
              + per.size() + " containers");
        }
        for (int ci = 0; ci < per.size(); ci++) {
          ContainerDeviceRequest r = per.get(ci).get(v);
          int want = r == null ? 0 : r.nums();
          if (entries.get(ci).size() != want) {
            return Optional.of("container " + ci + " requests " + want + " " + v + " device(s), the allocation gives "
                + entries.get(ci).size());
          }
        }
      }
      devices = rec.get();
      source = AllocationSource.ALREADY_RECORDED;
      return Optional.empty();
    }

    private BindResult acquire() {
      List<NodeLock> list = new ArrayList<>(keys.size());
      try {
        for (String k : keys) {
          list.add(locks.forKey(k));
        }
      } catch (IllegalArgumentException e) {
        return fail(BindOutcome.FAILED, "no node lock for the pod's lock keys " + keys + ": " + e.getMessage(), e);
      }
      boolean gang = GangMembership.isMember(before.labels(), before.podGroupName());
      Instant t = clock.instant();
      try {
        LockAcquisition a = acquirer.acquire(node, owner, gang, list);
        attempts = a.attempts();
        held = list;
        lockWait = Duration.between(t, clock.instant());
        return null;
      } catch (LockWaitTimeoutException e) {
        attempts = e.attempts();
        lockWait = Duration.between(t, clock.instant());
        LOG.debug("node {}: pod {} gave up waiting for the node lock: {}", node, owner, e.getMessage());
        return fail(BindOutcome.TIMED_OUT, e.getMessage(), e);
      } catch (LockContentionException e) {
        attempts = 1;
        lockWait = Duration.between(t, clock.instant());
        LOG.debug("node {}: pod {} met node lock contention: {}", node, owner, e.getMessage());
        return fail(BindOutcome.CONTENDED, e.getMessage(), e);
      } catch (LockBackendException e) {
        attempts = Math.max(1, attempts);
        lockWait = Duration.between(t, clock.instant());
        return fail(e.kind() == LockBackendException.Kind.NODE_NOT_FOUND ? BindOutcome.NODE_NOT_FOUND : BindOutcome.FAILED,
            e.getMessage(), e);
      } catch (NodeLockException e) {
        lockWait = Duration.between(t, clock.instant());
        return fail(BindOutcome.FAILED, e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        lockWait = Duration.between(t, clock.instant());
        return fail(BindOutcome.FAILED, "interrupted while waiting for the node lock on " + node, e);
      }
    }

    private BindResult chooseAllocation(PodRequests requests) {
      NodeView nodeView;
      List<PodView> others = new ArrayList<>();
      try {
        nodeView = reader.readNode(node).orElse(null);
        if (nodeView == null) {
          return fail(BindOutcome.NODE_NOT_FOUND, "node " + node + " not found", null);
        }
        for (ClusterPod p : reader.listPodsAssignedTo(node)) {
          if (!(p.view().namespace().equals(ns) && p.view().name().equals(name))) {
            others.add(p.view());
          }
        }
      } catch (ClusterException e) {
        return fail(BindOutcome.FAILED, "cannot read the usage of node " + node + ": " + e.getMessage(), e);
      }
      NodeUsage nodeUsage = usage.nodeUsage(nodeView, others);
      StringBuilder problem = new StringBuilder();
      Optional<PodDevices> recorded = AllocationAnnotations.recorded(registry, vendors, before, node, problem);
      if (problem.length() > 0) {
        LOG.debug("pod {}: ignoring its recorded allocation: {}", owner, problem);
      }
      if (!refitUnderLock && recorded.isPresent()) {
        devices = recorded.get();
        source = AllocationSource.UNCHECKED;
        return null;
      }
      String why = "";
      if (recorded.isPresent()) {
        Optional<String> misfit = AllocationCheck.verify(registry, requests, nodeUsage, recorded.get());
        if (misfit.isEmpty()) {
          devices = recorded.get();
          source = AllocationSource.FILTER_KEPT;
          return null;
        }
        why = "the Filter's allocation no longer fits (" + misfit.get() + "); ";
        LOG.debug("pod {} on node {}: {}", owner, node, why);
      }
      NodeFit fit = fitter.fit(requests, nodeUsage, FitContext.newMemo());
      if (!fit.fits()) {
        return fail(BindOutcome.DOES_NOT_FIT, why + "node " + node + ": " + fit.reason(), null);
      }
      devices = fit.devices();
      source = AllocationSource.REFITTED;
      return null;
    }

    /**
     * Right before the Binding: every held lock must still be this pod's ({@link NodeLock#stillHeld}).
     * A pod not yet bound is no HAMi#3096-protected holder, so a bind stalled past the lock
     * timeout (GC pause, slow API server) may have lost its lock to a takeover, and the new
     * holder may have allocated the same devices meanwhile; binding then would let the device
     * plugin serve two pods from one allocation. Lost ⇒ {@link BindOutcome#CONTENDED} (the
     * allocation annotations are cleared, our remaining locks released, the new holder's lock
     * left alone) and kube-scheduler retries the pod.
     *
     * @return null if every lock is still held, else the failed result
     */
    private BindResult confirmLocksBeforeBinding() {
      for (NodeLock lock : held) {
        boolean mine;
        try {
          mine = lock.stillHeld(node, owner);
        } catch (LockBackendException e) {
          return fail(e.kind() == LockBackendException.Kind.NODE_NOT_FOUND ? BindOutcome.NODE_NOT_FOUND : BindOutcome.FAILED,
              "cannot confirm node lock " + lock.key() + " on " + node + " before binding pod " + ns + "/" + name + ": "
                  + e.getMessage(), e);
        }
        if (!mine) {
          Duration took = Duration.between(start, clock.instant()).truncatedTo(ChronoUnit.SECONDS);
          String why = "node lock " + lock.key() + " on " + node + " is no longer held by pod " + ns + "/" + name
              + " (taken over after it expired: the bind took " + GoDuration.formatSaturated(took) + ", lock timeout "
              + GoDuration.formatSaturated(lock.lockTimeout()) + "); not binding on a lost lock";
          LOG.warn("{}", why);
          return fail(BindOutcome.CONTENDED, why, null);
        }
      }
      return null;
    }

    private BindResult postBinding() {
      if (!held.isEmpty()) {
        BindResult lost = confirmLocksBeforeBinding();
        if (lost != null) {
          return lost;
        }
      }
      bindingStart = clock.instant();
      BindingOutcome b = writer.bind(ns, name, before == null ? uid : before.uid(), node);
      markBinding();
      switch (b.kind()) {
        case BOUND:
          return done(BindOutcome.BOUND, "", null, Optional.empty());
        case ALREADY_BOUND:
          if (b.boundNode().filter(node::equals).isPresent()) {
            return done(BindOutcome.BOUND, "", null, Optional.empty());
          }
          return boundElsewhere(b.boundNode(), b.detail());
        case NOT_FOUND:
          return fail(BindOutcome.POD_NOT_FOUND, "binding pod " + ns + "/" + name + " to " + node + ": " + b.detail(), null);
        case REJECTED:
          return fail(BindOutcome.FAILED, "binding pod " + ns + "/" + name + " to " + node + " was rejected: " + b.detail(),
              null);
        case AMBIGUOUS:
        default:
          return resolveAmbiguous(b.detail());
      }
    }

    /** Binding time so far: the POST and any re-reads after an ambiguous answer. */
    private void markBinding() {
      binding = Duration.between(bindingStart, clock.instant());
    }

    /** HAMi#2645: the binding may or may not have been applied; the pod tells. */
    private BindResult resolveAmbiguous(String detail) {
      ClusterException last = null;
      for (int i = 0; i < ambiguityRereads; i++) {
        Optional<ClusterPod> p;
        try {
          p = reader.readPod(ns, name);
        } catch (ClusterException e) {
          last = e;
          continue;
        } finally {
          markBinding();
        }
        String currentUid = before == null ? uid : before.uid();
        if (p.isEmpty() || (!currentUid.isEmpty() && !currentUid.equals(p.get().view().uid()))) {
          return fail(BindOutcome.POD_NOT_FOUND, "pod " + ns + "/" + name + " disappeared during an ambiguous binding ("
              + detail + ")", null);
        }
        if (p.get().nodeName().filter(node::equals).isPresent()) {
          LOG.debug("pod {}/{}: ambiguous binding ({}) turned out applied", ns, name, detail);
          return done(BindOutcome.BOUND, "", null, Optional.empty());
        }
        if (p.get().isBound()) {
          return boundElsewhere(p.get().nodeName(), detail);
        }
        return fail(BindOutcome.FAILED, "binding pod " + ns + "/" + name + " to " + node + " was not applied: " + detail, null);
      }
      String why = "binding pod " + ns + "/" + name + " to " + node + " has an unknown outcome (" + detail
          + ") and the pod could not be re-read" + (last == null ? "" : ": " + last.getMessage());
      LOG.warn("{}; leaving its locks and allocation annotations in place", why);
      return done(BindOutcome.UNKNOWN, why, last, Optional.empty());
    }

    private BindResult boundElsewhere(Optional<String> other, String detail) {
      Instant t = clock.instant();
      if (annotated && before != null) {
        try {
          writer.patchPodMetadata(ns, name, AllocationAnnotations.restorePatch(registry, vendors, before));
          annotated = false;
        } catch (ClusterException e) {
          if (e.kind() != ClusterException.Kind.NOT_FOUND) {
            problems.add("cannot restore the annotations of pod " + ns + "/" + name + ": " + e.getMessage());
          }
        }
      }
      releaseLocks();
      cleanup = cleanup.plus(Duration.between(t, clock.instant()));
      return done(BindOutcome.ALREADY_BOUND, "pod " + ns + "/" + name + " is bound to node " + other.orElse("?") + ": " + detail,
          null, other);
    }

    /** Failure: clear what we (or the Filter) wrote, release the locks, report. */
    private BindResult fail(BindOutcome outcome, String reason, Exception cause) {
      Instant t = clock.instant();
      if (before != null && (annotated || AllocationAnnotations.hasAny(registry, vendors, before))
          && outcome != BindOutcome.POD_NOT_FOUND) {
        try {
          writer.patchPodMetadata(ns, name, AllocationAnnotations.clearPatch(registry, vendors, before.uid()));
          annotated = false;
        } catch (ClusterException e) {
          if (e.kind() != ClusterException.Kind.NOT_FOUND) {
            problems.add("cannot clear the allocation annotations of pod " + ns + "/" + name + ": " + e.getMessage());
          }
        }
      }
      releaseLocks();
      cleanup = cleanup.plus(Duration.between(t, clock.instant()));
      if (!problems.isEmpty()) {
        LOG.warn("pod {}/{} on node {}: bind failed ({}) and cleanup was incomplete: {}", ns, name, node, reason, problems);
      }
      return done(outcome, reason, cause, Optional.empty());
    }

    private void releaseLocks() {
      if (held.isEmpty()) {
        return;
      }
      try {
        acquirer.releaseAll(node, owner, held);
        held = List.of();
      } catch (LockBackendException e) {
        if (e.kind() == LockBackendException.Kind.NODE_NOT_FOUND) {
          held = List.of(); // the lock went away with the node
        } else {
          problems.add("cannot release the node locks " + keys + " on " + node + ": " + e.getMessage());
        }
      }
    }

    private BindResult done(BindOutcome outcome, String reason, Exception cause, Optional<String> boundNode) {
      boolean locksHeld = !held.isEmpty();
      Duration total = Duration.between(start, clock.instant());
      return new BindResult(outcome, ns, name, node, Optional.ofNullable(devices), source, reason, boundNode,
          Optional.ofNullable(cause), new BindTimings(lockWait, refit, annotate, binding, cleanup, total), attempts, keys,
          locksHeld, problems);
    }
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

  private static void requireName(String argument, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(argument + " must not be null or blank: \"" + value + "\"");
    }
  }

  /** Builder for {@link PodBinder}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final ClusterReader reader;
    private final ClusterWriter writer;
    private final VendorRegistry registry;
    private final NodeLocks locks;
    private PodFitter fitter;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private NodeLockListener lockListener = NodeLockListener.NOOP;
    private boolean refitUnderLock = true;
    private InstantSource clock = Clock.systemUTC();
    private int ambiguityRereads = 3;

    private Builder(ClusterReader reader, ClusterWriter writer, VendorRegistry registry, NodeLocks locks) {
      if (reader == null || writer == null || registry == null || locks == null) {
        throw new IllegalArgumentException("reader, writer, registry and locks must not be null");
      }
      this.reader = reader;
      this.writer = writer;
      this.registry = registry;
      this.locks = locks;
    }

    /**
     * @param fitter the fitter for re-fits (its policies should match the Filter's); default
     *     {@code PodFitter.create(registry)} (HAMi defaults: device {@code spread}, node {@code binpack})
     * @return this
     */
    public Builder fitter(PodFitter fitter) {
      this.fitter = Objects.requireNonNull(fitter, "fitter");
      return this;
    }

    /**
     * @param policy gang lock retries (HAMi {@code --node-lock-retry-timeout}); default 100 ms / 28 s
     * @return this
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * The listener of the bind flow's acquire loop ({@link NodeLockAcquirer}): it receives
     * {@link NodeLockListener#waited} once per bind that takes locks, on the binding thread, when
     * the lock wait ends (acquired or not), e.g. for wait-time metrics. Nothing needs it for
     * correctness: the acquire loop opens and closes its places in the wake-up queues itself.
     * Combine several with {@link NodeLockListener#all}.
     *
     * @param listener the listener (default {@link NodeLockListener#NOOP})
     * @return this
     */
    public Builder lockListener(NodeLockListener listener) {
      this.lockListener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * @param on whether to re-check and re-fit the allocation under the lock (default true);
     *     false trusts the Filter's annotations as HAMi does and can over-commit
     * @return this
     */
    public Builder refitUnderLock(boolean on) {
      this.refitUnderLock = on;
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
     * @param n re-reads of the pod after an ambiguous binding before reporting
     *     {@link BindOutcome#UNKNOWN} (default 3); at least 1
     * @return this
     */
    public Builder ambiguityRereads(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("ambiguityRereads must be at least 1: " + n);
      }
      this.ambiguityRereads = n;
      return this;
    }

    /** @return the binder */
    public PodBinder build() {
      return new PodBinder(this);
    }
  }
}
