package dev.hamilock.benchmarks.convergence;

import java.util.Optional;

/**
 * A node-lock algorithm under test, split the way it runs in a cluster: scheduler replicas that
 * acquire the lock before binding ({@link Replica}) and, per node, the device plugin that releases
 * it after {@code Allocate} ({@link Plugin}). Each replica and each plugin is a separate simulated
 * process: its own {@code ApiClient} and its own in-process state (HAMi's per-node mutex map, this
 * library's memo of written values).
 *
 * <p>Implementations: {@link HamiPollingAlgorithm} (a), {@link FailFastBackoffAlgorithm} (b), and
 * this library with and without the watch wake-up (c, d).
 */
public interface Algorithm {

  /**
   * @return a short stable id for CSV and charts, e.g. {@code hami-polling}
   */
  String key();

  /**
   * @return a human label for tables, e.g. {@code (a) HAMi: 100 ms pod-group polling}
   */
  String label();

  /**
   * @return {@code true} for this library's algorithms, {@code false} for baselines
   */
  boolean ours();

  /**
   * @return a started scheduler replica; closed by the harness after the scenario
   * @throws Exception if it cannot start (e.g. its watch fails to open)
   */
  Replica replica(ProcessContext process) throws Exception;

  /**
   * @return a started device plugin of one node; closed by the harness after the scenario
   * @throws Exception if it cannot start
   */
  Plugin plugin(ProcessContext process) throws Exception;

  /** The scheduler-replica side: acquire before bind, and the bind-failure release. */
  interface Replica extends AutoCloseable {
    /**
     * Blocks until {@code pod} holds the lock on {@code node}, waiting or re-queueing as the
     * algorithm does for a gang member.
     *
     * @throws Exception if the algorithm gave up (its timeout) or an API call failed
     */
    void acquire(String node, GangPod pod) throws Exception;

    /**
     * Releases {@code pod}'s lock from this replica (HAMi's {@code releaseAllDevices} on a bind
     * failure; used to measure the request cost of acquire + release in one process).
     *
     * @throws Exception if an API call failed
     */
    void release(String node, GangPod pod) throws Exception;

    /** Stops what the process started (e.g. its watch); never throws. */
    @Override
    default void close() {}
  }

  /**
   * The device-plugin side: finds the pod it serves at the start of {@code Allocate}, and releases
   * the lock by exact owner after it.
   */
  interface Plugin extends AutoCloseable {
    /**
     * The plugin's lookup of the pod being allocated at the start of {@code Allocate}, inside the
     * hold (HAMi spec §3.1, {@code pkg/util/util.go} GetPendingPod: GET the node, parse the lock
     * owner), through {@link ProcessContext#lookupClient()} so the harness counts it apart from the
     * lock traffic. The default makes none: HAMi's release (a, b) does not use what its lookup
     * reads.
     *
     * @return the lock value read in the lookup, if the algorithm's release uses it
     * @throws Exception if an API call failed
     */
    default Optional<String> lookup(String node, GangPod pod) throws Exception {
      return Optional.empty();
    }

    /**
     * Releases {@code pod}'s lock on {@code node}, owner-checked.
     *
     * @param observedLockValue what {@link #lookup} returned for this member
     * @throws Exception if an API call failed
     */
    void release(String node, GangPod pod, Optional<String> observedLockValue) throws Exception;

    /** Stops what the process started (e.g. its watch); never throws. */
    @Override
    default void close() {}
  }
}
