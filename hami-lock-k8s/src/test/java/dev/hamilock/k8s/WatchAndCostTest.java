package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.k8s.watch.FairLockReleaseSignal;
import dev.hamilock.k8s.watch.NodeLockWatch;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** API cost counted by the emulator, and the shared watch's wake-ups, recovery and shutdown. */
class WatchAndCostTest {

    /** Long enough that only the watch can wake a waiter within a test. */
    static final RetryPolicy SLOW_POLL = RetryPolicy.builder().pollInterval(Duration.ofSeconds(20))
            .retryTimeout(Duration.ofSeconds(25)).build();

    static ApiServerEmulator k8s;
    static Cluster cluster;
    static ExecutorService pool;

    @BeforeAll
    static void start() {
        k8s = ApiServerEmulator.start();
        cluster = new Cluster(k8s);
        pool = Executors.newCachedThreadPool();
        cluster.pod("ns", "holder", "Running");
    }

    @AfterAll
    static void stop() {
        pool.shutdownNow();
        k8s.close();
    }

    static KubernetesNodeLocks locks(boolean watch) throws InterruptedException {
        KubernetesNodeLocks l = KubernetesNodeLocks.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of()).retryPolicy(SLOW_POLL).watch(watch).build();
        if (watch) {
            assertThat(l.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5))).isTrue();
        }
        return l;
    }

    @Test
    void uncontendedAcquireAndReleaseCostOneRequestEach() throws Exception {
        try (KubernetesNodeLocks l = locks(true)) {
            String node = cluster.node(Cluster.unique("cost"));
            LockOwner owner = LockOwner.of("ns", "p");
            k8s.resetCounters();
            l.acquirer().acquire(node, owner, true, List.of(l.nodeLock()));
            assertThat(cluster.lockRequests()).isEqualTo(1);
            assertThat(cluster.patches()).isEqualTo(1);
            l.acquirer().releaseAll(node, owner, List.of(l.nodeLock()));
            assertThat(cluster.lockRequests()).isEqualTo(2);
            assertThat(cluster.patches()).isEqualTo(2);
            assertThat(cluster.lock(node)).isEmpty();
        }
    }

    /**
     * With dangling detection the first contended attempt also GETs the holder pod (liveness), so
     * the waiter's total is 3 node requests (PATCH 422, GET node, PATCH 200) plus 1 pod GET.
     */
    @Test
    void contendedThenReleasedAcquireByAWatchingWaiterCostsThreeNodeRequestsPlusOneLivenessGet() throws Exception {
        try (KubernetesNodeLocks holderLocks = locks(false); KubernetesNodeLocks waiterLocks = locks(true)) {
            String node = cluster.node(Cluster.unique("cost"));
            LockOwner holder = LockOwner.of("ns", "holder");
            holderLocks.nodeLock().acquire(node, holder);
            k8s.resetCounters();
            FairLockReleaseSignal signal = waiterLocks.watch().orElseThrow().signal();
            CompletableFuture<LockAcquisition> waiting = waiterLocks.acquirer().acquireAsync(node,
                    LockOwner.of("ns", "gang-pod-1"), true, List.of(waiterLocks.nodeLock()), pool);
            awaitQueued(signal, node, 1);
            long waiterSoFar = cluster.lockRequests();
            holderLocks.nodeLock().release(node, holder);
            LockAcquisition a = waiting.get(10, TimeUnit.SECONDS);
            long waiterRequests = cluster.lockRequests() - 1; // minus the holder's release
            assertThat(waiterSoFar).isEqualTo(3); // PATCH 422 + GET node + GET holder pod
            assertThat(k8s.requestCount("get", "pods")).isEqualTo(1);
            assertThat(waiterRequests - k8s.requestCount("get", "pods")).isLessThanOrEqualTo(3);
            assertThat(waiterRequests).isEqualTo(4);
            assertThat(a.attempts()).isEqualTo(2);
            assertThat(a.waited()).isLessThan(SLOW_POLL.pollInterval()); // woken by the watch, not the poll
            assertThat(signal.queueLength(node)).isZero(); // ticket ended with the acquire call
        }
    }

    @Test
    void withoutDanglingDetectionTheWatchingWaiterCostsAtMostThreeRequests() throws Exception {
        try (KubernetesNodeLocks holderLocks = locks(false);
                KubernetesNodeLocks waiterLocks = KubernetesNodeLocks.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                        .environment(Map.of()).retryPolicy(SLOW_POLL)
                        .ownerLiveness(dev.hamilock.core.OwnerLiveness.assumeAlive()).build()) {
            assertThat(waiterLocks.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5))).isTrue();
            String node = cluster.node(Cluster.unique("cost"));
            LockOwner holder = LockOwner.of("ns", "holder");
            holderLocks.nodeLock().acquire(node, holder);
            k8s.resetCounters();
            CompletableFuture<LockAcquisition> waiting = waiterLocks.acquirer().acquireAsync(node,
                    LockOwner.of("ns", "gang-pod-2"), true, List.of(waiterLocks.nodeLock()), pool);
            awaitQueued(waiterLocks.watch().orElseThrow().signal(), node, 1);
            holderLocks.nodeLock().release(node, holder);
            LockAcquisition a = waiting.get(10, TimeUnit.SECONDS);
            assertThat(cluster.lockRequests() - 1).isLessThanOrEqualTo(3).isEqualTo(3);
            assertThat(a.attempts()).isEqualTo(2);
        }
    }

    @Test
    void oneReleaseWakesOneWaiterInArrivalOrder() throws Exception {
        try (KubernetesNodeLocks holderLocks = locks(false); KubernetesNodeLocks waiterLocks = locks(true)) {
            String node = cluster.node(Cluster.unique("fair"));
            LockOwner holder = LockOwner.of("ns", "holder");
            holderLocks.nodeLock().acquire(node, holder);
            FairLockReleaseSignal signal = waiterLocks.watch().orElseThrow().signal();
            CompletableFuture<LockAcquisition> first = waiterLocks.acquirer().acquireAsync(node,
                    LockOwner.of("ns", "first"), true, List.of(waiterLocks.nodeLock()), pool);
            awaitQueued(signal, node, 1);
            CompletableFuture<LockAcquisition> second = waiterLocks.acquirer().acquireAsync(node,
                    LockOwner.of("ns", "second"), true, List.of(waiterLocks.nodeLock()), pool);
            awaitQueued(signal, node, 2);
            k8s.resetCounters();
            holderLocks.nodeLock().release(node, holder);
            LockAcquisition a = first.get(10, TimeUnit.SECONDS);
            assertThat(a.owner().name()).isEqualTo("first");
            Thread.sleep(200); // the second waiter must stay asleep: no herd
            assertThat(second).isNotDone();
            assertThat(cluster.lockRequests()).isEqualTo(2); // holder's release + first's PATCH
            waiterLocks.acquirer().releaseAll(node, a.owner(), List.of(waiterLocks.nodeLock()));
            assertThat(second.get(10, TimeUnit.SECONDS).owner().name()).isEqualTo("second");
        }
    }

    @Test
    void watchSurvivesDroppedStreamsAndCompaction() throws Exception {
        FairLockReleaseSignal signal = new FairLockReleaseSignal();
        try (NodeLockWatch watch = NodeLockWatch.builder(k8s.newApiClient(Duration.ofSeconds(5)), signal).build().start()) {
            assertThat(watch.awaitSynced(Duration.ofSeconds(5))).isTrue();
            String node = cluster.node(Cluster.unique("w"));
            cluster.setLock(node, "2026-08-01T06:00:00Z,ns,x");
            long v0 = signal.version(node);
            k8s.dropWatches();
            cluster.setLock(node, null); // released while the stream is down: resume from RV sees it
            assertThat(signal.awaitChange(node, v0, Duration.ofSeconds(5))).isTrue();
            long relists = watch.relistCount();
            cluster.setLock(node, "2026-08-01T06:00:01Z,ns,y");
            awaitConnected(watch);
            long v1 = signal.version(node);
            k8s.compact(); // resume point too old: 410, relist, the diff is signalled
            k8s.dropWatches();
            cluster.setLock(node, null);
            assertThat(signal.awaitChange(node, v1, Duration.ofSeconds(5))).isTrue();
            assertThat(watch.relistCount()).isGreaterThan(relists);
            awaitConnected(watch);
            // unknown fields in events are ignored
            k8s.setInjectUnknownFields(true);
            try {
                cluster.setLock(node, "2026-08-01T06:00:02Z,ns,z");
                long v2 = signal.version(node);
                cluster.setLock(node, null);
                assertThat(signal.awaitChange(node, v2, Duration.ofSeconds(5))).isTrue();
            } finally {
                k8s.setInjectUnknownFields(false);
            }
        }
    }

    @Test
    void changesThatDoNotFreeTheLockDoNotWakeWaiters() throws Exception {
        FairLockReleaseSignal signal = new FairLockReleaseSignal();
        try (NodeLockWatch watch = NodeLockWatch.builder(k8s.apiClient(), signal).build().start()) {
            assertThat(watch.awaitSynced(Duration.ofSeconds(5))).isTrue();
            String node = cluster.node(Cluster.unique("w"));
            long v0 = signal.version(node);
            long releases = watch.releaseCount();
            cluster.setLock(node, "2026-08-01T06:00:00Z,ns,a");
            cluster.setLock(node, "2026-08-01T06:00:00Z,ns,b");
            cluster.setLock(node, null); // the only release
            assertThat(signal.awaitChange(node, v0, Duration.ofSeconds(5))).isTrue();
            assertThat(watch.releaseCount()).isEqualTo(releases + 1);
        }
    }

    @Test
    void closeStopsTheWatchThread() throws Exception {
        java.util.List<Thread> made = new java.util.concurrent.CopyOnWriteArrayList<>();
        NodeLockWatch watch = NodeLockWatch.builder(k8s.apiClient(), new FairLockReleaseSignal())
                .threadFactory(r -> {
                    Thread t = new Thread(r, "test-watch");
                    t.setDaemon(true);
                    made.add(t);
                    return t;
                }).build().start();
        assertThat(watch.awaitSynced(Duration.ofSeconds(5))).isTrue();
        assertThat(made).hasSize(1).allMatch(Thread::isAlive);
        watch.close();
        made.get(0).join(5_000);
        assertThat(made.get(0).isAlive()).isFalse();
        assertThat(watch.isConnected()).isFalse();
        watch.close(); // idempotent

        long before = liveWatchThreads();
        KubernetesNodeLocks l = locks(true);
        assertThat(liveWatchThreads()).isEqualTo(before + 1);
        l.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (liveWatchThreads() > before && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(liveWatchThreads()).isEqualTo(before);
    }

    static long liveWatchThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("hami-lock-node-watch-")).count();
    }

    static void awaitQueued(FairLockReleaseSignal signal, String node, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (signal.queueLength(node) < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waiters did not queue: " + signal.queueLength(node));
            }
            Thread.sleep(2);
        }
        Thread.sleep(20); // let the last one enter awaitChange
    }

    static void awaitConnected(NodeLockWatch watch) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!watch.isConnected()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("watch did not reconnect");
            }
            Thread.sleep(5);
        }
    }
}
