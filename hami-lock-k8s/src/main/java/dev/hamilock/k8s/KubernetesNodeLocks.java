package dev.hamilock.k8s;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.k8s.internal.Validation;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.k8s.lock.ObservedLockValues;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import dev.hamilock.k8s.watch.NodeLockWatch;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;

/**
 * HAMi's node lock ({@code hami.io/mutex.lock} on Node objects, {@code pkg/util/nodelock/nodelock.go})
 * on client-java, assembled from one validating builder: the one-request
 * {@link NodeAnnotationLockStore}, {@link PodOwnerLiveness} for dangling takeover, core's
 * {@link StoreNodeLock} semantics, the node watch feeding core's fair wake-up queue
 * ({@link FairReleaseQueue}: one waiter per release, oldest first) — its own, or one shared by every
 * lock key of a client ({@link Builder#nodeWatch(NodeLockWatch)}) — and core's gang-aware
 * {@link NodeLockAcquirer}, which opens and closes its waiter handles itself (nothing for a caller
 * to report back).
 *
 * <pre>{@code
 * try (KubernetesNodeLocks locks = KubernetesNodeLocks.builder(apiClient).build()) {
 *     LockOwner owner = KubernetesViews.lockOwner(pod);
 *     LockAcquisition a = locks.acquirer().acquire(node, owner, KubernetesViews.isGangMember(pod),
 *             List.of(locks.nodeLock()));
 *     try { ... bind ... } finally { locks.acquirer().releaseAll(node, owner, List.of(locks.nodeLock())); }
 * }
 * }</pre>
 *
 * <p>Costs (counted by the emulator in this module's tests): an uncontended acquire is 1 request
 * (PATCH), a release 1 request (PATCH). A contended attempt is a PATCH answered 422, then one GET
 * of the node to learn the holder — skipped while the watch is connected and shows the node
 * locked — and one GET of the holder pod for the dangling check, skipped while an ALIVE answer
 * for the same lock value is younger than {@link Builder#livenessCacheTtl(Duration)} (1 s). While
 * the watch is connected, a gang member waits for its release wake-up (one waiter per release,
 * in arrival order) up to {@link RetryPolicy#watchedPollInterval()} (1 s) instead of re-trying
 * every 100 ms; while it is down, the 100 ms poll applies. So a watching waiter that is woken by
 * the release acquires in 2 requests (PATCH 422, PATCH 200) plus at most one pod GET per holder
 * value per second, i.e. at most 3.
 *
 * <p>Close it to stop the watch thread. Thread-safe.
 */
public final class KubernetesNodeLocks implements AutoCloseable {

    private final NodeAnnotationLockStore store;
    private final NodeLock nodeLock;
    private final NodeLockAcquirer acquirer;
    private final Optional<NodeLockWatch> watch;
    private final boolean ownsWatch;

    private KubernetesNodeLocks(NodeAnnotationLockStore store, NodeLock nodeLock, NodeLockAcquirer acquirer,
            Optional<NodeLockWatch> watch, boolean ownsWatch) {
        this.store = store;
        this.nodeLock = nodeLock;
        this.acquirer = acquirer;
        this.watch = watch;
        this.ownsWatch = ownsWatch;
    }

    /**
     * @param apiClient the client (base path, credentials); request timeouts are applied per call
     * @return a builder with HAMi's defaults: key {@code hami.io/mutex.lock}, lock timeout
     *         explicit &gt; {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min, retry policy 100 ms poll /
     *         28 s / extender 30 s, request timeout 10 s, watch on, system UTC clock
     * @throws IllegalArgumentException if {@code apiClient} is null
     */
    public static Builder builder(ApiClient apiClient) {
        if (apiClient == null) {
            throw new IllegalArgumentException("apiClient must not be null");
        }
        return new Builder(apiClient);
    }

    /** @return the node lock (one attempt per call; HAMi semantics with this library's improvements) */
    public NodeLock nodeLock() {
        return nodeLock;
    }

    /** @return the gang-aware acquire loop configured with the retry policy */
    public NodeLockAcquirer acquirer() {
        return acquirer;
    }

    /** @return the backend store (one request per operation) */
    public LockStore store() {
        return store;
    }

    /** @return the release signal waiters wake on, empty if the watch is off */
    public Optional<LockReleaseSignal> releaseSignal() {
        return store.releaseSignal();
    }

    /** @return the node watch feeding this key's wake-up queue (own or shared), empty if off */
    public Optional<NodeLockWatch> watch() {
        return watch;
    }

    /** Stops the watch thread, if this stack started its own (a shared watch is its owner's to close). Idempotent. */
    @Override
    public void close() {
        if (ownsWatch) {
            watch.ifPresent(NodeLockWatch::close);
        }
    }

    @Override
    public String toString() {
        return "KubernetesNodeLocks[" + nodeLock + ", watch=" + watch.map(Object::toString).orElse("off") + "]";
    }

    /** Validating builder for {@link KubernetesNodeLocks}. Not thread-safe. */
    public static final class Builder {
        private final ApiClient apiClient;
        private ApiClient watchApiClient;
        private String key = NodeLock.DEFAULT_KEY;
        private Duration lockTimeout;
        private Map<String, String> environment;
        private RetryPolicy retryPolicy = RetryPolicy.defaults();
        private Duration requestTimeout = NodeAnnotationLockStore.DEFAULT_REQUEST_TIMEOUT;
        private int maxAttempts = NodeAnnotationLockStore.DEFAULT_MAX_ATTEMPTS;
        private boolean watchEnabled = true;
        private NodeLockWatch sharedWatch;
        private InstantSource clock = Clock.systemUTC();
        private NodeLockListener listener = NodeLockListener.NOOP;
        private OwnerLiveness ownerLiveness;
        private Duration livenessCacheTtl = StoreNodeLock.DEFAULT_LIVENESS_CACHE_TTL;

        private Builder(ApiClient apiClient) {
            this.apiClient = apiClient;
        }

        /**
         * @param key lock annotation key (default {@code hami.io/mutex.lock}); non-blank
         * @return this builder
         */
        public Builder key(String key) {
            this.key = key;
            return this;
        }

        /**
         * @param lockTimeout explicit lock timeout (expiry), overriding {@code HAMI_NODELOCK_EXPIRE};
         *                    positive; HAMi's {@code --node-lock-timeout} default is 5 min
         * @return this builder
         */
        public Builder lockTimeout(Duration lockTimeout) {
            this.lockTimeout = lockTimeout;
            return this;
        }

        /**
         * @param environment where {@code HAMI_NODELOCK_EXPIRE} is read (default {@code System.getenv()})
         * @return this builder
         */
        public Builder environment(Map<String, String> environment) {
            this.environment = environment;
            return this;
        }

        /**
         * @param retryPolicy gang retry policy (default {@link RetryPolicy#defaults()}: poll
         *                    100 ms, retry timeout 28 s, extender HTTP timeout 30 s; a zero retry
         *                    timeout disables waiting)
         * @return this builder
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * @param requestTimeout whole-call timeout of every request (default 10 s); positive and
         *                       below the retry policy's extender HTTP timeout
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = requestTimeout;
            return this;
        }

        /**
         * @param maxAttempts attempts per lock operation on transient failures (default 5), 1..100
         * @return this builder
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * @param enabled whether to run the shared node watch that wakes waiters on release
         *                (default {@code true}); without it waiters only poll
         * @return this builder
         */
        public Builder watch(boolean enabled) {
            this.watchEnabled = enabled;
            return this;
        }

        /**
         * Serves this stack's key from {@code shared} instead of starting a watch of its own: one
         * node watch per client serves every lock key (issue 16 item 8). The stack adds its key
         * ({@link NodeLockWatch#releaseSignal(String)}) but neither starts nor closes the watch:
         * its owner does (add every key before starting it, or it relists once per late key).
         * Ignored when {@link #watch(boolean)} is off.
         *
         * @param shared the watch, or {@code null} for an own one (the default)
         * @return this builder
         */
        public Builder nodeWatch(NodeLockWatch shared) {
            this.sharedWatch = shared;
            return this;
        }

        /**
         * @param watchApiClient client for the watch (its read timeout is replaced by none);
         *                       default: derived from the main client
         * @return this builder
         */
        public Builder watchApiClient(ApiClient watchApiClient) {
            this.watchApiClient = watchApiClient;
            return this;
        }

        /**
         * @param clock time source for lock timestamps and expiry (default system UTC)
         * @return this builder
         */
        public Builder clock(InstantSource clock) {
            this.clock = clock;
            return this;
        }

        /**
         * @param listener lock event listener, e.g. for metrics (default none)
         * @return this builder
         */
        public Builder listener(NodeLockListener listener) {
            this.listener = listener;
            return this;
        }

        /**
         * @param ownerLiveness replaces the default {@link PodOwnerLiveness} (e.g.
         *                      {@link OwnerLiveness#assumeAlive()} to disable dangling takeover)
         * @return this builder
         */
        public Builder ownerLiveness(OwnerLiveness ownerLiveness) {
            this.ownerLiveness = ownerLiveness;
            return this;
        }

        /**
         * @param livenessCacheTtl how long an ALIVE answer of the owner-liveness check is reused
         *                         for the same exact lock value (default 1 s; {@code 0} asks on
         *                         every contended attempt, as HAMi does). A holder pod that dies
         *                         is taken over at most this much later. Not negative. See
         *                         {@link StoreNodeLock.Builder#livenessCacheTtl(Duration)}.
         * @return this builder
         */
        public Builder livenessCacheTtl(Duration livenessCacheTtl) {
            this.livenessCacheTtl = livenessCacheTtl;
            return this;
        }

        /**
         * Builds and, if the watch is on, starts the watch thread.
         *
         * @return the locks
         * @throws IllegalArgumentException naming the setting: blank key, non-positive lock
         *                                  timeout or invalid {@code HAMI_NODELOCK_EXPIRE}, null
         *                                  retry policy/clock/listener, request timeout not
         *                                  positive or not below the extender HTTP timeout,
         *                                  maxAttempts outside 1..100, negative liveness cache TTL
         */
        public KubernetesNodeLocks build() {
            if (retryPolicy == null) {
                throw new IllegalArgumentException("retryPolicy must not be null");
            }
            Validation.positive("requestTimeout", requestTimeout);
            if (requestTimeout.compareTo(retryPolicy.extenderHttpTimeout()) >= 0) {
                throw new IllegalArgumentException("requestTimeout " + requestTimeout
                        + " must be below the scheduler extender HTTP timeout " + retryPolicy.extenderHttpTimeout());
            }
            if (listener == null) {
                throw new IllegalArgumentException("listener must not be null");
            }
            if (key == null || key.isBlank()) {
                throw new IllegalArgumentException("key must not be null or blank: " + key);
            }
            if (livenessCacheTtl == null || livenessCacheTtl.isNegative()) {
                throw new IllegalArgumentException("livenessCacheTtl must be zero or positive: " + livenessCacheTtl);
            }
            NodeLockWatch nodeWatch = null;
            boolean ownWatch = false;
            if (watchEnabled && sharedWatch != null) {
                nodeWatch = sharedWatch;
            } else if (watchEnabled) {
                NodeLockWatch.Builder wb = NodeLockWatch.builder(apiClient).requestTimeout(requestTimeout);
                if (watchApiClient != null) {
                    wb.watchApiClient(watchApiClient);
                }
                nodeWatch = wb.build();
                ownWatch = true;
            }
            FairReleaseQueue signal = nodeWatch == null ? null : nodeWatch.releaseSignal(key);
            NodeLockWatch watched = nodeWatch;
            String lockKey = key;
            ObservedLockValues view = watched == null ? ObservedLockValues.NONE
                    : (node, k) -> k.equals(lockKey) ? watched.observedLockValue(node, k) : Optional.empty();
            NodeAnnotationLockStore store = NodeAnnotationLockStore.builder(apiClient)
                    .requestTimeout(requestTimeout)
                    .maxAttempts(maxAttempts)
                    .releaseSignal(signal)
                    .observedValues(view)
                    .build();
            OwnerLiveness liveness = ownerLiveness != null ? ownerLiveness
                    : PodOwnerLiveness.create(apiClient, requestTimeout, maxAttempts);
            StoreNodeLock.Builder lb = StoreNodeLock.builder(store).key(key).ownerLiveness(liveness).clock(clock)
                    .listener(listener).livenessCacheTtl(livenessCacheTtl);
            if (lockTimeout != null) {
                lb.lockTimeout(lockTimeout);
            }
            if (environment != null) {
                lb.environment(environment);
            }
            StoreNodeLock nodeLock = lb.build();
            NodeLockAcquirer acquirer = NodeLockAcquirer.create(retryPolicy, listener);
            if (ownWatch) {
                nodeWatch.start();
            }
            Optional<NodeLockWatch> watch = Optional.ofNullable(nodeWatch);
            return new KubernetesNodeLocks(store, nodeLock, acquirer, watch, ownWatch);
        }
    }
}
