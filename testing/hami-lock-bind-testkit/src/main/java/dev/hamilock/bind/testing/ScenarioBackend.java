package dev.hamilock.bind.testing;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Optional;

/**
 * The cluster a {@link ScenarioRunner} runs a {@link Scenario} on: the two ports, the node locks,
 * and the setup and inspection calls the runner needs. {@link InMemoryScenarioBackend} is the fast
 * one; hami-lock-k8s implements it over client-java and the HTTP emulator. One backend per run.
 */
public interface ScenarioBackend extends AutoCloseable {

  /**
   * @return fresh reads (the {@link ClusterReader} contract)
   */
  ClusterReader reader();

  /**
   * @return pod patches and bindings
   */
  ClusterWriter writer();

  /**
   * @return the real node locks (a new lock instance per call is fine: binders and device plugins
   *     are separate processes in real life)
   */
  NodeLockProvider locks();

  /**
   * The real node locks, reading time from {@code clock} (lock stamps, expiry, first sight), so the
   * runner can let a stalled device plugin outlive the lock timeout ({@link
   * Scenario.PodSpec#allocateStallsPastLockTimeout()}). The default ignores the clock ({@link
   * #locks()}): on such a backend a stalled Allocate is only slow, and the stall case checks
   * nothing beyond the plain property.
   *
   * @param clock the run's clock
   * @return the locks
   */
  default NodeLockProvider locks(java.time.InstantSource clock) {
    return locks();
  }

  /**
   * Creates a node.
   *
   * @param node the node (with its registration annotation)
   * @throws Exception on backend failure
   */
  void createNode(NodeView node) throws Exception;

  /**
   * Serves the scenario's DRA objects ({@link Scenario#draObjects()}, issue 28) to the reader. The
   * default serves none and refuses a scenario with claims, so no backend ignores them silently.
   *
   * @param dra the ResourceSlices and allocated ResourceClaims
   * @throws UnsupportedOperationException if {@code dra} has claims and the backend serves none
   */
  default void setDra(DraObjects dra) {
    if (!dra.claims().isEmpty()) {
      throw new UnsupportedOperationException(getClass().getName() + " serves no ResourceClaims");
    }
  }

  /**
   * Creates an unbound pod.
   *
   * @param pod the pod
   * @return the stored pod (with its UID)
   * @throws Exception on backend failure
   */
  PodView createPod(PodView pod) throws Exception;

  /**
   * Makes the API server treat this pod's next Binding as given; backends that cannot inject faults
   * return false and the runner treats the pod as {@link Scenario.BindingFault#NONE}.
   *
   * @param namespace namespace
   * @param name pod name
   * @param fault the fault
   * @return whether the fault will be injected
   */
  default boolean injectBindingFault(String namespace, String name, Scenario.BindingFault fault) {
    return false;
  }

  /**
   * Removes a node's lock annotation as another writer would, unconditionally and outside every
   * lock instance of this run: an operator's {@code kubectl annotate node NODE KEY-}, a forced
   * {@code hami-lock-doctor unlock}, HAMi's Go scheduler taking over a stamp it judges expired by a
   * skewed clock (issue 23). The default cannot do this.
   *
   * @param node the node
   * @param key the lock key
   * @return the value removed, empty if the node held none
   * @throws UnsupportedOperationException naming the backend if it cannot remove a lock
   * @throws Exception on backend failure
   */
  default Optional<String> removeLockAsAnotherWriter(String node, String key) throws Exception {
    throw new UnsupportedOperationException(
        getClass().getName() + " cannot remove lock " + key + " on " + node + " as another writer");
  }

  /**
   * Takes a node's lock over as HAMi's Go scheduler would on a clock ahead of ours by {@code skew}
   * (issue 23 fault 1): HAMi's {@code LockNode} ({@code pkg/util/nodelock/nodelock.go}) reads the
   * lock, finds {@code time.Since(lockTime) > NodeLockTimeout} by its own clock, removes the value
   * without an owner check and sets its own for a live pod of its own (created here, so that no
   * binder may take it over as dangling). The lock stays with that pod until {@link
   * #releaseSkewedLock}. The default cannot do this.
   *
   * @param node the node
   * @param key the lock key
   * @param lockTimeout the lock timeout the skewed writer judges expiry with (HAMi's {@code
   *     NodeLockTimeout})
   * @param skew how far the writer's clock is ahead of the binders'
   * @return what the writer replaced and wrote
   * @throws UnsupportedOperationException naming the backend if it has no skewed writer
   * @throws Exception on backend failure
   */
  default LockTakeover takeOverLockWithSkewedClock(
      String node, String key, java.time.Duration lockTimeout, java.time.Duration skew)
      throws Exception {
    throw new UnsupportedOperationException(
        getClass().getName() + " has no skewed writer to take over lock " + key + " on " + node);
  }

  /**
   * Releases the lock a {@link #takeOverLockWithSkewedClock skewed writer} took, as HAMi's {@code
   * ReleaseNodeLock} with its owner check does (a value of another pod stays).
   *
   * @param takeover what {@link #takeOverLockWithSkewedClock} returned
   * @return the lock value stored right before the release (the new holder's own if nobody touched
   *     it), empty if none
   * @throws UnsupportedOperationException naming the backend if it has no skewed writer
   * @throws Exception on backend failure
   */
  default Optional<String> releaseSkewedLock(LockTakeover takeover) throws Exception {
    throw new UnsupportedOperationException(
        getClass().getName() + " has no skewed writer to release " + takeover);
  }

  /**
   * One takeover by a skewed writer.
   *
   * @param node the node
   * @param holder the name of the skewed writer's pod (in the run's namespace)
   * @param replaced the value it found and removed, empty if the node held none
   * @param written the value it wrote, empty if another writer set one first (HAMi's {@code
   *     SetNodeLock} then reports contention)
   */
  record LockTakeover(
      String node, String holder, Optional<String> replaced, Optional<String> written) {}

  /**
   * @return every scenario pod as stored now
   * @throws Exception on backend failure
   */
  List<ClusterPod> pods() throws Exception;

  /**
   * @return every node as stored now (annotations include any lock left behind)
   * @throws Exception on backend failure
   */
  List<NodeView> nodes() throws Exception;

  /** Releases backend resources; the default does nothing. */
  @Override
  default void close() {}
}
