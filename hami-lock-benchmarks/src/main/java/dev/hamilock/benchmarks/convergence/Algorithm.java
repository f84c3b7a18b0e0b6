package dev.hamilock.benchmarks.convergence;

/**
 * A node-lock algorithm under test, split the way it runs in a cluster: scheduler replicas that
 * acquire the lock before binding ({@link Replica}) and, per node, the device plugin that releases
 * it after {@code Allocate} ({@link Plugin}). Each replica and each plugin is a separate simulated
 * process: its own {@code ApiClient} and its own in-process state (HAMi's per-node mutex map,
 * this library's memo of written values).
 *
 * <p>Implementations: {@link HamiPollingAlgorithm} (a), {@link FailFastBackoffAlgorithm} (b), and
 * this library with and without the watch wake-up (c, d).
 */
public interface Algorithm {

    /** @return a short stable id for CSV and charts, e.g. {@code hami-polling} */
    String key();

    /** @return a human label for tables, e.g. {@code (a) HAMi: 100 ms pod-group polling} */
    String label();

    /** @return {@code true} for this library's algorithms, {@code false} for baselines */
    boolean ours();

    /**
     * Starts one scheduler replica.
     *
     * @param process the replica's clients
     * @return the replica; closed by the harness after the scenario
     * @throws Exception if it cannot start (e.g. its watch fails to open)
     */
    Replica replica(ProcessContext process) throws Exception;

    /**
     * Starts the device plugin of one node.
     *
     * @param process the plugin's clients
     * @return the plugin; closed by the harness after the scenario
     * @throws Exception if it cannot start
     */
    Plugin plugin(ProcessContext process) throws Exception;

    /** The scheduler-replica side: acquire before bind, and the bind-failure release. */
    interface Replica extends AutoCloseable {
        /**
         * Blocks until {@code pod} holds the lock on {@code node}, waiting or re-queueing as the
         * algorithm does for a gang member.
         *
         * @param node the node
         * @param pod  the gang member
         * @throws Exception if the algorithm gave up (its timeout) or an API call failed
         */
        void acquire(String node, GangPod pod) throws Exception;

        /**
         * Releases {@code pod}'s lock from this replica (HAMi's {@code releaseAllDevices} on a bind
         * failure; used to measure the request cost of acquire + release in one process).
         *
         * @param node the node
         * @param pod  the member
         * @throws Exception if an API call failed
         */
        void release(String node, GangPod pod) throws Exception;

        /** Stops what the process started (e.g. its watch); never throws. */
        @Override
        default void close() {
        }
    }

    /** The device-plugin side: releases the lock by exact owner after {@code Allocate}. */
    interface Plugin extends AutoCloseable {
        /**
         * Releases {@code pod}'s lock on {@code node}, owner-checked.
         *
         * @param node the node
         * @param pod  the member whose {@code Allocate} finished
         * @throws Exception if an API call failed
         */
        void release(String node, GangPod pod) throws Exception;

        /** Stops what the process started (e.g. its watch); never throws. */
        @Override
        default void close() {
        }
    }
}
