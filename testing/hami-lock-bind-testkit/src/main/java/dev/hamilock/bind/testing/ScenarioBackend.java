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

  ClusterReader reader();

  ClusterWriter writer();

  /**
   * @return the real node locks (a new instance per call is fine: binders and device plugins are
   *     separate processes in real life)
   */
  NodeLockProvider locks();

  /**
   * @return the node locks on the run's clock, so a stalled device plugin can outlive the lock
   *     timeout ({@link Scenario.PodSpec#allocateStallsPastLockTimeout()}); the default ignores it
   */
  default NodeLockProvider locks(java.time.InstantSource clock) {
    return locks();
  }

  /**
   * @throws Exception on backend failure
   */
  void createNode(NodeView node) throws Exception;

  /**
   * Serves {@link Scenario#draObjects()} to the reader.
   *
   * @throws UnsupportedOperationException if {@code dra} has claims and the backend serves none
   */
  default void setDra(DraObjects dra) {
    if (!dra.claims().isEmpty()) {
      throw new UnsupportedOperationException(getClass().getName() + " serves no ResourceClaims");
    }
  }

  /**
   * @return the stored unbound pod (with its UID)
   * @throws Exception on backend failure
   */
  PodView createPod(PodView pod) throws Exception;

  /**
   * @return whether the API server will answer this pod's next Binding with {@code fault} (if not,
   *     the runner treats it as {@link Scenario.BindingFault#NONE})
   */
  default boolean injectBindingFault(String namespace, String name, Scenario.BindingFault fault) {
    return false;
  }

  /**
   * Removes a node's lock annotation unconditionally, outside every lock of this run ({@code
   * kubectl annotate node NODE KEY-}, {@code hami-lock-doctor unlock}).
   *
   * @return the value removed, empty if the node held none
   * @throws UnsupportedOperationException naming the backend if it cannot remove a lock
   * @throws Exception on backend failure
   */
  default Optional<String> removeLockAsAnotherWriter(String node, String key) throws Exception {
    throw new UnsupportedOperationException(
        getClass().getName() + " cannot remove lock " + key + " on " + node + " as another writer");
  }

  /**
   * Takes a node's lock over as HAMi's {@code LockNode} ({@code pkg/util/nodelock/nodelock.go}) on
   * a clock {@code skew} ahead: judges {@code time.Since(lockTime) > lockTimeout}, removes the
   * value without an owner check and sets its own for a live pod created here (so no binder takes
   * it as dangling), held until {@link #releaseSkewedLock}.
   *
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
   * Releases a skewed writer's lock as HAMi's {@code ReleaseNodeLock} with its owner check.
   *
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
   * @param holder the skewed writer's pod (in the run's namespace)
   * @param replaced the value it removed, empty if none
   * @param written the value it wrote, empty if another writer set one first
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

  @Override
  default void close() {}
}
