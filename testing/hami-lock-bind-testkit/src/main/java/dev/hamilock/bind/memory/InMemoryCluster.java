package dev.hamilock.bind.memory;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * An in-process cluster of nodes and pods implementing {@link ClusterReader} and {@link
 * ClusterWriter}, plus a {@link LockStore} whose lock values live in the nodes' annotations (as
 * HAMi's {@code hami.io/mutex.lock}) and an {@link OwnerLiveness} over its pods. For fast tests,
 * property runs and the demo's fast path.
 *
 * <p><b>Semantics</b>: linearizable (one monitor around every operation); one cluster-wide {@code
 * resourceVersion} counter, stamped on each object at every change (like etcd's revision); pods
 * keep creation order, which is the list order of {@link #listPodsOnNode}; {@link #bind} behaves
 * like the API server (no node existence check, 409-like {@link
 * BindingPostResult.Kind#ALREADY_BOUND} for a bound pod, NOT_FOUND for a missing pod or a UID
 * mismatch, {@link BindingPostResult.Kind#CONFLICT} for an unbound pod at another resourceVersion
 * than the Binding names, the preconditions checked first as kube-apiserver checks them). Deleting
 * a node deletes its lock annotation and wakes lock waiters.
 *
 * <p>Test hooks: a random latency per port operation (slept outside the monitor) and a {@link
 * FaultInjector}; administrative methods ({@link #addNode}, {@link #addPod}, ...) bypass hooks and
 * {@link #operationCount}.
 */
public final class InMemoryCluster implements ClusterReader, ClusterWriter {

  /** Port operations, for counters and fault injection. */
  public enum Operation {
    READ_NODE,
    READ_POD,
    LIST_ASSIGNED,
    LIST_ON_NODE,
    PATCH_POD,
    BIND,
    /**
     * {@link LockStore#read} of {@link #lockStore()}, and the read that finds the witness of a
     * refused create or replace (the Kubernetes store's GET after a 422).
     */
    LOCK_READ,
    /** Writes of {@link #lockStore()} (create, replace, delete). */
    LOCK_WRITE
  }

  /** What a {@link FaultInjector} does to one operation. */
  public enum Fault {
    NONE,
    /** Fail with an unknown-outcome error ({@code UNAVAILABLE} / {@code AMBIGUOUS}) unapplied. */
    FAIL_BEFORE,
    /** Apply, then report an unknown outcome; lock-store writes resolve it and succeed. */
    FAIL_AFTER
  }

  /** Decides the fault of each port operation; may also mutate the cluster (admin methods). */
  @FunctionalInterface
  public interface FaultInjector {
    FaultInjector NONE = (op, target) -> Fault.NONE;

    /**
     * @param op the operation about to run
     * @param target the object: node name, or {@code namespace/name} for pod operations
     * @return the fault to apply
     */
    Fault inject(Operation op, String target);
  }

  private final Object mu = new Object();
  private final Map<String, NodeObj> nodes = new LinkedHashMap<>();
  private final Map<String, PodObj> pods = new LinkedHashMap<>();
  private final FairReleaseQueue releases = FairReleaseQueue.create();
  private final Map<Operation, AtomicLong> counters = new EnumMap<>(Operation.class);
  private final long maxLatencyNanos;
  private volatile FaultInjector faults;
  private volatile DraObjects dra = DraObjects.NONE;
  private long revision;
  private long uidCounter;

  private InMemoryCluster(Builder b) {
    this.maxLatencyNanos = b.maxLatency.toNanos();
    this.faults = b.faults;
    for (Operation op : Operation.values()) {
      counters.put(op, new AtomicLong());
    }
  }

  /**
   * @return an empty cluster without latency or faults
   */
  public static InMemoryCluster create() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  // ------------------------------------------------------------------ administration (no hooks)

  /** Adds or replaces a node. */
  public void addNode(NodeView node) {
    Objects.requireNonNull(node, "node");
    synchronized (mu) {
      nodes.put(node.name(), new NodeObj(node, ++revision));
    }
  }

  /**
   * Deletes a node (and with it its lock annotation), waking lock waiters.
   *
   * @return whether it existed
   */
  public boolean removeNode(String name) {
    boolean removed;
    synchronized (mu) {
      removed = nodes.remove(name) != null;
      revision++;
    }
    if (removed) {
      releases.wakeAll(name);
    }
    return removed;
  }

  /**
   * Adds a pod (unbound unless {@code nodeName} is given). A blank UID is replaced by a fresh one.
   *
   * @param nodeName {@code spec.nodeName}, empty for an unbound pod
   * @throws IllegalArgumentException if a pod with that namespace/name exists
   */
  public ClusterPod addPod(PodView pod, Optional<String> nodeName) {
    Objects.requireNonNull(pod, "pod");
    synchronized (mu) {
      checkArgument(!pods.containsKey(pod.key()), "pod %s already exists", pod.key());
      PodView stored =
          pod.uid().isBlank() ? pod.toBuilder().uid("uid-" + (++uidCounter)).build() : pod;
      PodObj o = new PodObj(stored, nodeName.orElse(null), ++revision);
      pods.put(pod.key(), o);
      return o.snapshot();
    }
  }

  /**
   * Adds an unbound pod.
   *
   * @return the stored pod (with a UID)
   */
  public ClusterPod addPod(PodView pod) {
    return addPod(pod, Optional.empty());
  }

  /**
   * Deletes a pod.
   *
   * @return whether it existed
   */
  public boolean deletePod(String namespace, String name) {
    synchronized (mu) {
      revision++;
      return pods.remove(namespace + "/" + name) != null;
    }
  }

  /**
   * Marks a pod unschedulable ({@link PodView#unschedulable()}): the {@code PodScheduled} condition
   * False/Unschedulable kube-scheduler writes after a failed scheduling cycle. A Binding clears it,
   * as kube-apiserver sets the condition True.
   *
   * @return whether the pod exists
   */
  public boolean markUnschedulable(String namespace, String name) {
    synchronized (mu) {
      PodObj o = pods.get(namespace + "/" + name);
      if (o == null) {
        return false;
      }
      o.view = o.view.toBuilder().unschedulable(true).build();
      o.rv = ++revision;
      return true;
    }
  }

  /**
   * Replaces a node's annotations (e.g. a re-registration by the device plugin).
   *
   * @param annotations the new annotations (the lock annotation included as given)
   * @return whether the node exists
   */
  public boolean setNodeAnnotations(String name, Map<String, String> annotations) {
    boolean removedSome;
    synchronized (mu) {
      NodeObj o = nodes.get(name);
      if (o == null) {
        return false;
      }
      removedSome = !annotations.keySet().containsAll(o.view.annotations().keySet());
      o.view = new NodeView(name, o.view.labels(), annotations, o.view.allocatable());
      o.rv = ++revision;
    }
    if (removedSome) {
      releases.released(name); // a lock annotation may have gone with them
    }
    return true;
  }

  /**
   * @return every pod, in creation order
   */
  public List<ClusterPod> pods() {
    synchronized (mu) {
      List<ClusterPod> out = new ArrayList<>(pods.size());
      pods.values().forEach(o -> out.add(o.snapshot()));
      return out;
    }
  }

  /**
   * @return every node, in creation order
   */
  public List<NodeView> nodes() {
    synchronized (mu) {
      List<NodeView> out = new ArrayList<>(nodes.size());
      nodes.values().forEach(o -> out.add(o.view));
      return out;
    }
  }

  /**
   * @return how many times it was called through the ports since creation
   */
  public long operationCount(Operation op) {
    return counters.get(op).get();
  }

  /** Replaces the fault injector (e.g. to start failing in the middle of a test). */
  public void faults(FaultInjector injector) {
    this.faults = Objects.requireNonNull(injector, "injector");
  }

  // ------------------------------------------------------------------ ClusterReader

  /**
   * Sets the DRA objects {@link #readDra} answers (issue 28); bypasses hooks and counters.
   *
   * @param dra the ResourceSlices and ResourceClaims of the cluster
   */
  public void setDra(DraObjects dra) {
    this.dra = Objects.requireNonNull(dra, "dra");
  }

  /**
   * The objects of the last {@link #setDra}, {@link DraObjects#NONE} before; no hooks. As the
   * strictest port the contract allows: the ResourceSlices of the given nodes only ({@code
   * spec.nodeName} among them, as KubernetesWire's one-node {@code fieldSelector}), every claim; so
   * a caller that fits a node it did not ask for reads its claims unresolved.
   */
  @Override
  public DraObjects readDra(Collection<String> nodes) {
    DraObjects all = dra;
    return new DraObjects(
        all.slices().stream().filter(s -> nodes.contains(s.nodeName())).toList(), all.claims());
  }

  @Override
  public Optional<NodeView> readNode(String name) throws ClusterException {
    requireNonBlank(name, "name");
    if (enter(Operation.READ_NODE, name) == Fault.FAIL_BEFORE) {
      throw unavailable(Operation.READ_NODE, name);
    }
    synchronized (mu) {
      NodeObj o = nodes.get(name);
      return o == null ? Optional.empty() : Optional.of(o.view);
    }
  }

  @Override
  public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    String key = namespace + "/" + name;
    if (enter(Operation.READ_POD, key) == Fault.FAIL_BEFORE) {
      throw unavailable(Operation.READ_POD, key);
    }
    synchronized (mu) {
      PodObj o = pods.get(key);
      return o == null ? Optional.empty() : Optional.of(o.snapshot());
    }
  }

  @Override
  public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
    requireNonBlank(node, "node");
    if (enter(Operation.LIST_ASSIGNED, node) == Fault.FAIL_BEFORE) {
      throw unavailable(Operation.LIST_ASSIGNED, node);
    }
    synchronized (mu) {
      List<ClusterPod> out = new ArrayList<>();
      for (PodObj o : pods.values()) {
        if (node.equals(o.view.annotations().get(HamiAnnotations.VGPU_NODE))) {
          out.add(o.snapshot());
        }
      }
      return out;
    }
  }

  @Override
  public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
    requireNonBlank(node, "node");
    if (enter(Operation.LIST_ON_NODE, node) == Fault.FAIL_BEFORE) {
      throw unavailable(Operation.LIST_ON_NODE, node);
    }
    synchronized (mu) {
      List<ClusterPod> out = new ArrayList<>();
      for (PodObj o : pods.values()) {
        if (node.equals(o.nodeName)) {
          out.add(o.snapshot());
        }
      }
      return out;
    }
  }

  // ------------------------------------------------------------------ ClusterWriter

  @Override
  public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    Objects.requireNonNull(patch, "patch");
    String key = namespace + "/" + name;
    Fault f = enter(Operation.PATCH_POD, key);
    if (f == Fault.FAIL_BEFORE) {
      throw unavailable(Operation.PATCH_POD, key);
    }
    ClusterPod result;
    synchronized (mu) {
      PodObj o = pods.get(key);
      if (o == null || patch.expectedUid().filter(u -> !u.equals(o.view.uid())).isPresent()) {
        throw new ClusterException(
            ClusterException.Kind.NOT_FOUND,
            "pod "
                + key
                + (o == null
                    ? " not found"
                    : " has uid " + o.view.uid() + ", not " + patch.expectedUid().get()),
            null);
      }
      if (patch.expectedResourceVersion().filter(v -> !v.equals(Long.toString(o.rv))).isPresent()) {
        throw new ClusterException(
            ClusterException.Kind.CONFLICT,
            "pod "
                + key
                + " has resourceVersion "
                + o.rv
                + ", not "
                + patch.expectedResourceVersion().get(),
            null,
            java.util.OptionalInt.of(409));
      }
      o.view =
          o.view.toBuilder()
              .annotations(MetadataPatch.apply(o.view.annotations(), patch.annotations()))
              .labels(MetadataPatch.apply(o.view.labels(), patch.labels()))
              .build();
      o.rv = ++revision;
      result = o.snapshot();
    }
    if (f == Fault.FAIL_AFTER) {
      throw unavailable(Operation.PATCH_POD, key);
    }
    return result;
  }

  private final Set<String> unevictable = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final List<String> evictions = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Makes evictions of a pod fail with 429, as a PodDisruptionBudget that allows no disruption. */
  public void refuseEviction(String namespace, String name) {
    unevictable.add(namespace + "/" + name);
  }

  /**
   * @return {@code namespace/name} of every eviction accepted, in order (repeats included)
   */
  public List<String> evictions() {
    return List.copyOf(evictions);
  }

  /**
   * Accepts an eviction by marking the pod as being deleted (it stays listed, as a terminating pod
   * does, until {@link #deletePod}); 429 for a pod {@link #refuseEviction refused}, NOT_FOUND for a
   * missing pod, 409 CONFLICT for another UID: kube-apiserver's answer once its retry of the UID
   * precondition ({@code EvictionsRetry}, ~10 s) has run out, given here at once.
   */
  @Override
  public void evictPod(String namespace, String name, String uid) throws ClusterException {
    String key = namespace + "/" + name;
    if (unevictable.contains(key)) {
      throw new ClusterException(
          ClusterException.Kind.UNAVAILABLE,
          "Cannot evict pod as it would violate the pod's disruption budget: " + key,
          null,
          java.util.OptionalInt.of(429));
    }
    synchronized (mu) {
      PodObj o = pods.get(key);
      if (o == null) {
        throw new ClusterException(
            ClusterException.Kind.NOT_FOUND, "pod " + key + " not found", null);
      } else if (!uid.isEmpty() && !uid.equals(o.view.uid())) {
        throw new ClusterException(
            ClusterException.Kind.CONFLICT,
            "Precondition failed: UID in precondition: "
                + uid
                + ", UID in object meta: "
                + o.view.uid(),
            null,
            java.util.OptionalInt.of(409));
      }
      o.view = o.view.toBuilder().deleting(true).build();
      o.rv = ++revision;
      evictions.add(key);
    }
  }

  /** A recorded pod event ({@link #recordPodEvent}); type {@code Normal} or {@code Warning}. */
  public record PodEvent(
      String namespace, String name, String uid, String type, String reason, String message) {}

  private final List<PodEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Records the event in memory ({@link #events()}). */
  @Override
  public void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message) {
    events.add(new PodEvent(namespace, name, uid, type, reason, message));
  }

  /**
   * @return the pod warning events recorded so far, in order
   */
  public List<PodEvent> events() {
    return List.copyOf(events);
  }

  @Override
  public BindingPostResult bind(
      String namespace, String name, String uid, String resourceVersion, String node) {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    requireNonBlank(node, "node");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(resourceVersion, "resourceVersion");
    String key = namespace + "/" + name;
    Fault f = enter(Operation.BIND, key);
    if (f == Fault.FAIL_BEFORE) {
      return BindingPostResult.ambiguous(
          "injected: binding of pod " + key + " timed out (not applied)");
    }
    BindingPostResult outcome;
    synchronized (mu) {
      PodObj o = pods.get(key);
      if (o == null) {
        return BindingPostResult.notFound(
            "pods \"" + name + "\" not found in namespace " + namespace);
      }
      if (!uid.isEmpty() && !uid.equals(o.view.uid())) {
        return BindingPostResult.notFound(
            "Precondition failed: UID in precondition: "
                + uid
                + ", UID in object meta: "
                + o.view.uid());
      }
      if (!resourceVersion.isEmpty() && !resourceVersion.equals(Long.toString(o.rv))) {
        return o.nodeName != null // as KubernetesWire.bindingAnswer maps kube-apiserver's 409
            ? BindingPostResult.alreadyBound(o.nodeName)
            : BindingPostResult.conflict(
                "Precondition failed: ResourceVersion in precondition: "
                    + resourceVersion
                    + ", ResourceVersion in object meta: "
                    + o.rv);
      }
      if (o.nodeName != null) {
        return BindingPostResult.alreadyBound(o.nodeName);
      }
      o.nodeName = node;
      o.view = o.view.toBuilder().unschedulable(false).build(); // PodScheduled True
      o.rv = ++revision;
      outcome = BindingPostResult.bound();
    }
    if (f == Fault.FAIL_AFTER) {
      return BindingPostResult.ambiguous(
          "injected: binding of pod " + key + " timed out (applied)");
    }
    return outcome;
  }

  // ------------------------------------------------------------------ lock store and liveness

  /**
   * A {@link LockStore} whose values are annotations of this cluster's nodes: a missing node is
   * {@link LockBackendException.Kind#NOT_FOUND}; an injected {@link Fault#FAIL_BEFORE} is {@link
   * LockBackendException.Kind#UNAVAILABLE}. Its release signal fires on every change.
   *
   * @return the store (one per cluster; cheap to call)
   */
  public LockStore lockStore() {
    return lockStore;
  }

  /**
   * Liveness of lock owners from this cluster's pods (NOT_FOUND also for a UID mismatch,
   * SUCCEEDED/FAILED by phase, TERMINATING when deleting), with {@link OwnerLiveness#status} also
   * reporting {@code spec.nodeName}, the phase and {@code hami.io/bind-phase} (so an expired lock
   * whose holder may still be allocated is not taken over, HAMi#3096).
   */
  public OwnerLiveness ownerLiveness() {
    return new OwnerLiveness() {
      @Override
      public State check(LockOwner owner) {
        return status(owner).state();
      }

      @Override
      public HolderStatus status(LockOwner owner) {
        synchronized (mu) {
          PodObj o = pods.get(owner.namespace() + "/" + owner.name());
          if (o == null || owner.uid().filter(u -> !u.equals(o.view.uid())).isPresent()) {
            return HolderStatus.of(State.NOT_FOUND);
          }
          PodPhase phase =
              switch (o.view.phase()) {
                case PENDING -> PodPhase.PENDING;
                case RUNNING -> PodPhase.RUNNING;
                case SUCCEEDED -> PodPhase.SUCCEEDED;
                case FAILED -> PodPhase.FAILED;
                default -> PodPhase.UNKNOWN;
              };
          State state =
              o.view.deleting()
                  ? State.TERMINATING
                  : phase == PodPhase.SUCCEEDED
                      ? State.SUCCEEDED
                      : phase == PodPhase.FAILED ? State.FAILED : State.ALIVE;
          return HolderStatus.of(
              state,
              Optional.ofNullable(o.nodeName),
              phase,
              BindPhase.parse(o.view.annotations().get(BindPhase.ANNOTATION)));
        }
      }
    };
  }

  private final LockStore lockStore =
      new LockStore() {
        @Override
        public Optional<String> read(String node, String key) throws LockBackendException {
          lockEnter(Operation.LOCK_READ, node);
          synchronized (mu) {
            return Optional.ofNullable(existing(node).view.annotations().get(key));
          }
        }

        @Override
        public CasResult createIfAbsent(String node, String key, String value)
            throws LockBackendException {
          lockEnter(Operation.LOCK_WRITE, node);
          boolean written;
          synchronized (mu) {
            NodeObj o = existing(node);
            written = !o.view.annotations().containsKey(key);
            if (written) {
              o.setAnnotation(key, value, ++revision);
            }
          }
          if (!written) {
            return CasResult.notWritten(witness(node, key));
          }
          return CasResult.written();
        }

        /** A watch always current: the node's version while {@code key} is absent. */
        @Override
        public Optional<String> watchedFreeVersion(String node, String key) {
          synchronized (mu) {
            NodeObj o = nodes.get(node);
            return o == null || o.view.annotations().containsKey(key)
                ? Optional.empty()
                : Optional.of(Long.toString(o.rv));
          }
        }

        @Override
        public CasResult createIfAbsentAt(String node, String key, String value, String version)
            throws LockBackendException {
          lockEnter(Operation.LOCK_WRITE, node);
          synchronized (mu) {
            NodeObj o = existing(node);
            if (o.view.annotations().containsKey(key) || !Long.toString(o.rv).equals(version)) {
              return CasResult.notWritten(Optional.empty());
            }
            o.setAnnotation(key, value, ++revision);
          }
          return CasResult.written();
        }

        @Override
        public CasResult replaceIfEquals(String node, String key, String expected, String value)
            throws LockBackendException {
          lockEnter(Operation.LOCK_WRITE, node);
          boolean written;
          synchronized (mu) {
            NodeObj o = existing(node);
            written = expected.equals(o.view.annotations().get(key));
            if (written) {
              o.setAnnotation(key, value, ++revision);
            }
          }
          if (!written) {
            return CasResult.notWritten(witness(node, key));
          }
          return CasResult.written();
        }

        /**
         * The witness of a refused create or replace, found as the Kubernetes store finds it: one
         * node read after the refusal (counted as {@link Operation#LOCK_READ}, subject to its
         * faults), so request counts match the API server's.
         */
        private Optional<String> witness(String node, String key) throws LockBackendException {
          lockEnter(Operation.LOCK_READ, node);
          synchronized (mu) {
            return Optional.ofNullable(existing(node).view.annotations().get(key));
          }
        }

        @Override
        public boolean deleteIfEquals(String node, String key, String expected)
            throws LockBackendException {
          lockEnter(Operation.LOCK_WRITE, node);
          synchronized (mu) {
            NodeObj o = existing(node);
            if (!expected.equals(o.view.annotations().get(key))) {
              return false;
            }
            o.setAnnotation(key, null, ++revision);
          }
          releases.released(node);
          return true;
        }

        @Override
        public Optional<LockReleaseSignal> releaseSignal() {
          return Optional.of(releases);
        }

        private NodeObj existing(String node) throws LockBackendException {
          NodeObj o = nodes.get(node);
          if (o == null) {
            throw new LockBackendException(
                LockBackendException.Kind.NOT_FOUND, "node " + node + " not found", null);
          }
          return o;
        }

        private void lockEnter(Operation op, String node) throws LockBackendException {
          if (enter(op, node) == Fault.FAIL_BEFORE) {
            throw new LockBackendException(
                LockBackendException.Kind.UNAVAILABLE,
                "injected: " + op + " on node " + node + " failed",
                null);
          }
        }

        @Override
        public String toString() {
          return "InMemoryCluster.lockStore";
        }
      };

  // ------------------------------------------------------------------ internals

  private Fault enter(Operation op, String target) {
    counters.get(op).incrementAndGet();
    if (maxLatencyNanos > 0) {
      LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(maxLatencyNanos + 1));
    }
    Fault f = faults.inject(op, target);
    return f == null ? Fault.NONE : f;
  }

  private static ClusterException unavailable(Operation op, String target) {
    return new ClusterException(
        ClusterException.Kind.UNAVAILABLE,
        "injected: " + op + " on " + target + " timed out (outcome unknown)",
        null);
  }

  private static final class NodeObj {
    NodeView view;
    long rv;

    NodeObj(NodeView view, long rv) {
      this.view = view;
      this.rv = rv;
    }

    void setAnnotation(String key, String value, long newRv) {
      Map<String, String> a = new LinkedHashMap<>(view.annotations());
      if (value == null) {
        a.remove(key);
      } else {
        a.put(key, value);
      }
      view = new NodeView(view.name(), view.labels(), a, view.allocatable());
      rv = newRv;
    }
  }

  private static final class PodObj {
    PodView view;
    String nodeName;
    long rv;

    PodObj(PodView view, String nodeName, long rv) {
      this.view = view;
      this.nodeName = nodeName;
      this.rv = rv;
    }

    ClusterPod snapshot() {
      return new ClusterPod(view, Optional.ofNullable(nodeName), Long.toString(rv));
    }
  }

  /** Builder for {@link InMemoryCluster}; not thread-safe. */
  public static final class Builder {
    private Duration maxLatency = Duration.ZERO;
    private FaultInjector faults = FaultInjector.NONE;

    private Builder() {}

    /**
     * @param max each port operation first sleeps a uniformly random time in [0, max]; zero (the
     *     default) for none
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if negative
     */
    public Builder latency(Duration max) {
      Objects.requireNonNull(max, "latency");
      checkArgument(!max.isNegative(), "latency must not be negative: %s", max);
      this.maxLatency = max;
      return this;
    }

    /**
     * @param injector consulted before every port operation (default: no faults)
     */
    public Builder faults(FaultInjector injector) {
      this.faults = Objects.requireNonNull(injector, "injector");
      return this;
    }

    public InMemoryCluster build() {
      return new InMemoryCluster(this);
    }
  }
}
