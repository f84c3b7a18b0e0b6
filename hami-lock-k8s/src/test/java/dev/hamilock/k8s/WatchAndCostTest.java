package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.Waiter;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.k8s.watch.NodeLockWatch;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultHandle;
import dev.hamilock.testkit.FaultRule;
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
  static final RetryPolicy SLOW_POLL =
      RetryPolicy.builder()
          .pollInterval(Duration.ofSeconds(20))
          .retryTimeout(Duration.ofSeconds(25))
          .build();

  /**
   * The default 100 ms poll with a safety net longer than any test: waits are cut into 100 ms
   * slices, so re-entering the signal between slices must not wake a waiter.
   */
  static final RetryPolicy SLICED =
      RetryPolicy.builder()
          .watchedPollInterval(Duration.ofSeconds(20))
          .retryTimeout(Duration.ofSeconds(25))
          .build();

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

  static KubernetesLockStack locks(boolean watch) throws InterruptedException {
    KubernetesLockStack l =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .environment(Map.of())
            .retryPolicy(SLOW_POLL)
            .watch(watch)
            .build();
    if (watch) {
      assertThat(l.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5))).isTrue();
    }
    return l;
  }

  @Test
  void uncontendedAcquireAndReleaseCostOneRequestEach() throws Exception {
    try (KubernetesLockStack l = locks(true)) {
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
   * With the watch connected and showing a young holder, the contended attempt sends nothing (the
   * watched value is judged as it stands; its owner's liveness is asked only once the hint ages);
   * woken by the release, the waiter acquires with one PATCH: 1 request in total (3 until
   * 2026-12-03: a refused PATCH and a pod GET first).
   */
  @Test
  void contendedThenReleasedAcquireByAWatchingWaiterCostsOneRequest() throws Exception {
    try (KubernetesLockStack holderLocks = locks(false);
        KubernetesLockStack waiterLocks = locks(true)) {
      String node = cluster.node(Cluster.unique("cost"));
      LockOwner holder = LockOwner.of("ns", "holder");
      holderLocks.nodeLock().acquire(node, holder);
      awaitObserved(waiterLocks.watch().orElseThrow(), node, true);
      k8s.resetCounters();
      FairReleaseQueue signal = queue(waiterLocks);
      CompletableFuture<LockAcquisition> waiting =
          waiterLocks
              .acquirer()
              .acquireAsync(
                  node,
                  LockOwner.of("ns", "gang-pod-1"),
                  true,
                  List.of(waiterLocks.nodeLock()),
                  pool);
      awaitWaiting(signal, node, 1);
      long waiterSoFar = cluster.lockRequests();
      holderLocks.nodeLock().release(node, holder);
      LockAcquisition a = waiting.get(10, TimeUnit.SECONDS);
      long waiterRequests = cluster.lockRequests() - 1; // minus the holder's release
      assertThat(waiterSoFar).isZero(); // no PATCH 422, no GET of the holder pod or the node
      assertThat(k8s.requestCount("get", "nodes")).isZero();
      assertThat(k8s.requestCount("get", "pods")).isZero();
      assertThat(waiterRequests).isOne();
      assertThat(a.attempts()).isEqualTo(2);
      assertThat(a.waited())
          .isLessThan(SLOW_POLL.pollInterval()); // woken by the watch, not the poll
      assertThat(signal.queueLength(node)).isZero(); // the waiter closed with the acquire call
    }
  }

  @Test
  void withoutDanglingDetectionTheWatchingWaiterCostsOneRequestToo() throws Exception {
    try (KubernetesLockStack holderLocks = locks(false);
        KubernetesLockStack waiterLocks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .retryPolicy(SLOW_POLL)
                .ownerLiveness(dev.hamilock.core.OwnerLiveness.assumeAlive())
                .build()) {
      assertThat(waiterLocks.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5))).isTrue();
      String node = cluster.node(Cluster.unique("cost"));
      LockOwner holder = LockOwner.of("ns", "holder");
      holderLocks.nodeLock().acquire(node, holder);
      awaitObserved(waiterLocks.watch().orElseThrow(), node, true);
      k8s.resetCounters();
      CompletableFuture<LockAcquisition> waiting =
          waiterLocks
              .acquirer()
              .acquireAsync(
                  node,
                  LockOwner.of("ns", "gang-pod-2"),
                  true,
                  List.of(waiterLocks.nodeLock()),
                  pool);
      awaitWaiting(queue(waiterLocks), node, 1);
      holderLocks.nodeLock().release(node, holder);
      LockAcquisition a = waiting.get(10, TimeUnit.SECONDS);
      assertThat(cluster.lockRequests() - 1).isOne(); // PATCH 200 (a PATCH 422 first until 12-03)
      assertThat(a.attempts()).isEqualTo(2);
    }
  }

  @Test
  void aWatchThatDoesNotYetShowTheHolderFallsBackToOneGet() throws Exception {
    try (KubernetesLockStack holderLocks = locks(false);
        KubernetesLockStack waiterLocks = locks(true)) {
      String node = cluster.node(Cluster.unique("cost"));
      LockOwner holder = LockOwner.of("ns", "holder");
      // the watch is held back from seeing the holder's write: the view knows nothing
      FaultHandle block =
          k8s.addFault(
              FaultRule.matching()
                  .verb("watch")
                  .resource("nodes")
                  .respondStatus(503, "ServiceUnavailable", "watch held by the test"));
      try {
        k8s.dropWatches();
        awaitDisconnected(waiterLocks.watch().orElseThrow());
        holderLocks.nodeLock().acquire(node, holder);
        k8s.resetCounters();
        assertThatThrownBy(
                () -> waiterLocks.nodeLock().acquire(node, LockOwner.of("ns", "gang-pod-3")))
            .isInstanceOf(dev.hamilock.core.LockContentionException.class);
        assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(1);
        assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1);
      } finally {
        block.remove();
      }
      holderLocks.nodeLock().release(node, holder);
    }
  }

  @Test
  void oneReleaseWakesOneWaiterInArrivalOrder() throws Exception {
    List<String> contentions = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (KubernetesLockStack holderLocks = locks(false);
        KubernetesLockStack waiterLocks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .retryPolicy(SLOW_POLL)
                .listener(
                    new NodeLockListener() {
                      @Override
                      public void contended(dev.hamilock.core.LockContentionException e) {
                        contentions.add(e.holderValue().orElse("?"));
                      }
                    })
                .build()) {
      assertThat(waiterLocks.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5))).isTrue();
      String node = cluster.node(Cluster.unique("fair"));
      LockOwner holder = LockOwner.of("ns", "holder");
      holderLocks.nodeLock().acquire(node, holder);
      String held = cluster.lock(node).orElseThrow();
      FairReleaseQueue signal = queue(waiterLocks);
      CompletableFuture<LockAcquisition> first =
          waiterLocks
              .acquirer()
              .acquireAsync(
                  node, LockOwner.of("ns", "first"), true, List.of(waiterLocks.nodeLock()), pool);
      awaitWaiting(signal, node, 1);
      CompletableFuture<LockAcquisition> second =
          waiterLocks
              .acquirer()
              .acquireAsync(
                  node, LockOwner.of("ns", "second"), true, List.of(waiterLocks.nodeLock()), pool);
      awaitWaiting(signal, node, 2);
      k8s.resetCounters();
      holderLocks.nodeLock().release(node, holder);
      LockAcquisition a = first.get(10, TimeUnit.SECONDS);
      assertThat(a.owner().name()).isEqualTo("first");
      waiterLocks.acquirer().releaseAll(node, a.owner(), List.of(waiterLocks.nodeLock()));
      LockAcquisition b = second.get(10, TimeUnit.SECONDS);
      assertThat(b.owner().name()).isEqualTo("second");
      // no herd: the second waiter slept through the first release (woken by a herd it would
      // have met the first waiter's lock: one more attempt, one more 422, one more contention)
      assertThat(b.attempts()).isEqualTo(2);
      assertThat(contentions).containsOnly(held).hasSize(2);
      // holder's release, first's PATCH, first's release, second's PATCH
      assertThat(cluster.patches()).isEqualTo(4);
      assertThat(k8s.requestCount("get", "nodes")).isZero();
      waiterLocks.acquirer().releaseAll(node, b.owner(), List.of(waiterLocks.nodeLock()));
    }
  }

  /**
   * Goal of issue 8 ("API requests per member under contention ≤ 3"): a gang of 8 waiters queued on
   * one client behind a holder, each holding for 20 ms once it gets the lock, costs one PATCH 422
   * and one PATCH 200 per member plus one owner-pod GET for the holder's value; each member's own
   * requests are counted on the calling thread by an OkHttp interceptor and the totals agree with
   * the emulator's counters.
   */
  @Test
  void aQueueOfEightWaitersWatchingTheHolderSendsNoFailedPatch() throws Exception {
    int n = 8;
    Map<String, java.util.concurrent.atomic.AtomicInteger> perThread =
        new java.util.concurrent.ConcurrentHashMap<>();
    io.kubernetes.client.openapi.ApiClient client = k8s.newApiClient(Duration.ofSeconds(5));
    client.setHttpClient(
        client
            .getHttpClient()
            .newBuilder()
            .addInterceptor(
                chain -> {
                  perThread
                      .computeIfAbsent(
                          Thread.currentThread().getName(),
                          t -> new java.util.concurrent.atomic.AtomicInteger())
                      .incrementAndGet();
                  return chain.proceed(chain.request());
                })
            .build());
    ExecutorService members =
        Executors.newFixedThreadPool(
            n, r -> new Thread(r, "member-" + MEMBER_THREADS.incrementAndGet()));
    try (KubernetesLockStack holderLocks = locks(false);
        KubernetesLockStack gang =
            KubernetesLockStack.builder(client)
                .environment(Map.of())
                .watchApiClient(k8s.newApiClient(Duration.ofSeconds(5)))
                .retryPolicy(SLICED)
                .build()) {
      assertThat(gang.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5))).isTrue();
      String node = cluster.node(Cluster.unique("queue"));
      LockOwner holder = LockOwner.of("ns", "holder");
      holderLocks.nodeLock().acquire(node, holder);
      awaitObserved(gang.watch().orElseThrow(), node, true);
      FairReleaseQueue signal = queue(gang);
      List<LockOwner> owners = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        owners.add(LockOwner.of("ns", "gang-" + i));
        cluster.pod("ns", "gang-" + i, "Running"); // alive: a member's lock is never dangling
      }
      k8s.resetCounters();
      perThread.clear();
      List<java.util.concurrent.Future<MemberCost>> results = new java.util.ArrayList<>();
      for (LockOwner member : owners) {
        results.add(
            members.submit(
                () -> {
                  LockAcquisition a =
                      gang.acquirer().acquire(node, member, true, List.of(gang.nodeLock()));
                  int acquireRequests = perThread.get(Thread.currentThread().getName()).get();
                  Thread.sleep(20); // the device plugin's Allocate
                  gang.acquirer().releaseAll(node, member, List.of(gang.nodeLock()));
                  return new MemberCost(
                      a.attempts(),
                      acquireRequests,
                      perThread.get(Thread.currentThread().getName()).get());
                }));
        awaitWaiting(signal, node, results.size()); // in arrival order
      }
      long beforeRelease = cluster.lockRequests();
      holderLocks.nodeLock().release(node, holder);
      List<MemberCost> costs = new java.util.ArrayList<>();
      for (java.util.concurrent.Future<MemberCost> f : results) {
        costs.add(f.get(30, TimeUnit.SECONDS));
      }
      long memberTotal = cluster.lockRequests() - 1; // minus the holder's release
      int acquireTotal = costs.stream().mapToInt(MemberCost::acquireRequests).sum();
      int withRelease = costs.stream().mapToInt(MemberCost::requests).sum();
      System.out.printf(
          "queue of %d: requests before the release %d; per member acquire %s, with release %s; "
              + "average acquire %.2f, with release %.2f; emulator %s%n",
          n,
          beforeRelease,
          costs.stream().map(MemberCost::acquireRequests).toList(),
          costs.stream().map(MemberCost::requests).toList(),
          acquireTotal / (double) n,
          withRelease / (double) n,
          k8s.requestCounts());
      assertThat(memberTotal).isEqualTo(withRelease); // the interceptor saw every request
      assertThat(k8s.requestCount("get", "nodes")).isZero(); // the watch answered who holds it
      assertThat(k8s.requestCount("get", "pods")).isZero(); // young holders: no liveness lookup
      assertThat(costs)
          .allSatisfy(
              c -> assertThat(c.requests()).isEqualTo(c.acquireRequests() + 1)); // release: 1
      // the watch shows the holder, so nobody sends anything until a release wakes them, and each
      // one PATCH wins (issue 25; until 2026-12-03 the first member's refused PATCH and owner
      // lookup came first)
      assertThat(costs).allSatisfy(c -> assertThat(c.acquireRequests()).isOne());
      assertThat(cluster.lock(node)).isEmpty();
    } finally {
      members.shutdownNow();
    }
  }

  record MemberCost(int attempts, int acquireRequests, int requests) {}

  static final java.util.concurrent.atomic.AtomicInteger MEMBER_THREADS =
      new java.util.concurrent.atomic.AtomicInteger();

  @Test
  void withTheWatchDownWaitersFallBackToTheHundredMillisecondPollAndStillAcquire()
      throws Exception {
    RetryPolicy longSafetyNet =
        RetryPolicy.builder()
            .retryTimeout(Duration.ofSeconds(25))
            .watchedPollInterval(Duration.ofSeconds(20))
            .build();
    List<String> contentions = new java.util.concurrent.CopyOnWriteArrayList<>();
    FaultHandle block =
        k8s.addFault(
            FaultRule.matching()
                .verb("watch")
                .resource("nodes")
                .respondStatus(503, "ServiceUnavailable", "watch held by the test"));
    try (KubernetesLockStack holderLocks = locks(false);
        KubernetesLockStack waiterLocks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .retryPolicy(longSafetyNet)
                .listener(
                    new NodeLockListener() {
                      @Override
                      public void contended(dev.hamilock.core.LockContentionException e) {
                        contentions.add(e.holderValue().orElse("?"));
                      }
                    })
                .build()) {
      ReleaseFeeder watch = waiterLocks.watch().orElseThrow();
      String node = cluster.node(Cluster.unique("down"));
      LockOwner holder = LockOwner.of("ns", "holder");
      holderLocks.nodeLock().acquire(node, holder);
      CompletableFuture<LockAcquisition> waiting =
          waiterLocks
              .acquirer()
              .acquireAsync(
                  node, LockOwner.of("ns", "poller"), true, List.of(waiterLocks.nodeLock()), pool);
      // three contended attempts: only the 100 ms poll can make them (a reliable wait would
      // sleep 20 s between attempts)
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (contentions.size() < 3 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(contentions).hasSizeGreaterThanOrEqualTo(3);
      assertThat(watch.isConnected()).isFalse();
      assertThat(watch.releaseSignal(NodeLock.DEFAULT_KEY).isReliable(node)).isFalse();
      assertThat(block.hits()).isPositive();
      holderLocks.nodeLock().release(node, holder);
      LockAcquisition a = waiting.get(10, TimeUnit.SECONDS);
      assertThat(a.attempts()).isGreaterThanOrEqualTo(4);
      assertThat(a.waited()).isLessThan(longSafetyNet.watchedPollInterval());
      waiterLocks.acquirer().releaseAll(node, a.owner(), List.of(waiterLocks.nodeLock()));
    } finally {
      block.remove();
    }
  }

  @Test
  void aConnectedWatchMakesTheSignalReliableAndClosingItDoesNot() throws Exception {
    try (KubernetesLockStack l = locks(true)) {
      ReleaseFeeder watch = l.watch().orElseThrow();
      FairReleaseQueue queue = queue(l);
      awaitConnected(watch);
      assertThat(queue.isReliable("any")).isTrue();
      watch.close();
      assertThat(queue.isReliable("any")).isFalse();
      assertThat(watch.observedLockValue("any", NodeLock.DEFAULT_KEY)).isEmpty();
    }
    try (KubernetesLockStack l = locks(false)) {
      assertThat(l.releaseSignal()).isEmpty();
    }
  }

  @Test
  void theLivenessCacheSkipsRepeatedPodGetsForOneValueAndStillFindsADanglingOwnerAfterTheTtl()
      throws Exception {
    TestClock clock = new TestClock(java.time.Instant.parse("2026-08-01T06:00:00Z"));
    cluster.pod("ns", "short-lived", "Running");
    try (KubernetesLockStack holderLocks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .clock(clock)
                .watch(false)
                .build();
        KubernetesLockStack waiterLocks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .clock(clock)
                .watch(false)
                .retryPolicy(RetryPolicy.failFast())
                .livenessCacheTtl(Duration.ofSeconds(1))
                .build()) {
      String node = cluster.node(Cluster.unique("ttl"));
      holderLocks.nodeLock().acquire(node, LockOwner.of("ns", "short-lived"));
      k8s.resetCounters();
      LockOwner waiter = LockOwner.of("ns", "waiter");
      for (int i = 0; i < 3; i++) {
        assertThatThrownBy(() -> waiterLocks.nodeLock().acquire(node, waiter))
            .isInstanceOf(dev.hamilock.core.LockContentionException.class);
      }
      assertThat(k8s.requestCount("get", "pods")).isEqualTo(1);
      k8s.delete("pods", "ns", "short-lived"); // the holder dies within the TTL
      clock.advance(Duration.ofMillis(999));
      assertThatThrownBy(() -> waiterLocks.nodeLock().acquire(node, waiter))
          .isInstanceOf(dev.hamilock.core.LockContentionException.class);
      assertThat(k8s.requestCount("get", "pods")).isEqualTo(1);
      clock.advance(Duration.ofMillis(1));
      assertThat(waiterLocks.nodeLock().acquire(node, waiter))
          .isEqualTo(dev.hamilock.core.AcquireOutcome.TOOK_OVER_DANGLING);
      assertThat(k8s.requestCount("get", "pods")).isEqualTo(2);
      assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,waiter"));
    }
    try (KubernetesLockStack hamiLike =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .environment(Map.of())
            .watch(false)
            .retryPolicy(RetryPolicy.failFast())
            .livenessCacheTtl(Duration.ZERO)
            .build()) {
      String node = cluster.node(Cluster.unique("ttl"));
      cluster.setLock(
          node,
          java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
              + ",ns,holder");
      k8s.resetCounters();
      for (int i = 0; i < 3; i++) {
        assertThatThrownBy(() -> hamiLike.nodeLock().acquire(node, LockOwner.of("ns", "w")))
            .isInstanceOf(dev.hamilock.core.LockContentionException.class);
      }
      assertThat(k8s.requestCount("get", "pods")).isEqualTo(3); // TTL 0: asked every time, as HAMi
    }
    assertThatThrownBy(
            () ->
                KubernetesLockStack.builder(k8s.apiClient())
                    .livenessCacheTtl(Duration.ofSeconds(-1))
                    .watch(false)
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("livenessCacheTtl");
  }

  @Test
  void watchSurvivesDroppedStreamsAndCompaction() throws Exception {
    try (NodeLockWatch watch = startedWatch(k8s.newApiClient(Duration.ofSeconds(5)));
        Waiter waiter = watch.releaseSignal(NodeLock.DEFAULT_KEY).join(nodeFor("w"))) {
      // joined after the first LIST: a relist hands a wake-up to the first waiter of every free
      // node
      String node = waiter.node();
      cluster.setLock(node, "2026-08-01T06:00:00Z,ns,x");
      awaitObserved(watch, node, true);
      k8s.dropWatches();
      cluster.setLock(node, null); // released while the stream is down: resume from RV sees it
      assertThat(waiter.await(Duration.ofSeconds(5))).isTrue();
      long relists = watch.relistCount();
      cluster.setLock(node, "2026-08-01T06:00:01Z,ns,y");
      awaitConnected(watch);
      awaitObserved(watch, node, true);
      // hold the watch down while the lock is released and the history compacted, so the
      // resume point is certainly too old (410) and only a relist can show the release
      FaultHandle block =
          k8s.addFault(
              FaultRule.matching()
                  .verb("watch")
                  .resource("nodes")
                  .respondStatus(503, "ServiceUnavailable", "watch held by the test"));
      try {
        k8s.dropWatches();
        awaitDisconnected(watch);
        cluster.setLock(node, null);
        k8s.compact();
        assertThat(watch.relistCount()).isEqualTo(relists);
      } finally {
        block.remove();
      }
      assertThat(waiter.await(Duration.ofSeconds(10))).isTrue();
      assertThat(watch.relistCount()).isGreaterThan(relists);
      awaitConnected(watch);
      // unknown fields in events are ignored
      k8s.setInjectUnknownFields(true);
      try {
        cluster.setLock(node, "2026-08-01T06:00:02Z,ns,z");
        cluster.setLock(node, null);
        assertThat(waiter.await(Duration.ofSeconds(5))).isTrue();
      } finally {
        k8s.setInjectUnknownFields(false);
      }
    }
  }

  @Test
  void aReleaseSeenOnlyByARelistWakesOneWaiterNotTwo() throws Exception {
    String node = nodeFor("w");
    try (NodeLockWatch watch = startedWatch(k8s.newApiClient(Duration.ofSeconds(5)))) {
      cluster.setLock(node, "2026-08-01T06:00:00Z,ns,x");
      awaitObserved(watch, node, true);
      try (Waiter first = watch.releaseSignal(NodeLock.DEFAULT_KEY).join(node);
          Waiter second = watch.releaseSignal(NodeLock.DEFAULT_KEY).join(node)) {
        long relists = watch.relistCount();
        // the release happens while the watch is down and the history is compacted: only the
        // relist's diff shows it, and the relist's hand-out to free nodes with waiters must not
        // count the same release a second time
        FaultHandle block =
            k8s.addFault(
                FaultRule.matching()
                    .verb("watch")
                    .resource("nodes")
                    .respondStatus(503, "ServiceUnavailable", "watch held by the test"));
        try {
          k8s.dropWatches();
          awaitDisconnected(watch);
          cluster.setLock(node, null);
          k8s.compact();
        } finally {
          block.remove();
        }
        assertThat(first.await(Duration.ofSeconds(10))).isTrue();
        assertThat(watch.relistCount()).isGreaterThan(relists);
        // a second hand-out goes to the oldest waiter without one: the first again (its wait
        // consumed the first hand-out) or the second
        assertThat(first.await(Duration.ofMillis(300))).as("one release, one wake-up").isFalse();
        assertThat(second.await(Duration.ofMillis(300))).as("one release, one wake-up").isFalse();
      }
    }
  }

  @Test
  void changesThatDoNotFreeTheLockDoNotWakeWaiters() throws Exception {
    try (NodeLockWatch watch = startedWatch(k8s.apiClient());
        Waiter waiter = watch.releaseSignal(NodeLock.DEFAULT_KEY).join(nodeFor("w"))) {
      String node = waiter.node();
      long releases = watch.releaseCount();
      cluster.setLock(node, "2026-08-01T06:00:00Z,ns,a");
      cluster.setLock(node, "2026-08-01T06:00:00Z,ns,b");
      cluster.setLock(node, null); // the only release
      assertThat(waiter.await(Duration.ofSeconds(5))).isTrue();
      assertThat(waiter.await(Duration.ofMillis(200))).as("one release, one wake-up").isFalse();
      assertThat(watch.releaseCount()).isEqualTo(releases + 1);
    }
  }

  @Test
  void closeStopsTheWatchThread() throws Exception {
    java.util.List<Thread> made = new java.util.concurrent.CopyOnWriteArrayList<>();
    NodeLockWatch watch =
        NodeLockWatch.builder(k8s.apiClient())
            .threadFactory(
                r -> {
                  Thread t = new Thread(r, "test-watch");
                  t.setDaemon(true);
                  made.add(t);
                  return t;
                })
            .build()
            .start();
    assertThat(watch.awaitSynced(Duration.ofSeconds(5))).isTrue();
    assertThat(made).hasSize(1).allMatch(Thread::isAlive);
    watch.close();
    made.get(0).join(5_000);
    assertThat(made.get(0).isAlive()).isFalse();
    assertThat(watch.isConnected()).isFalse();
    watch.close(); // idempotent

    long before = liveWatchThreads();
    KubernetesLockStack l = locks(true);
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
        .filter(t -> t.isAlive() && t.getName().startsWith("hami-lock-node-watch-"))
        .count();
  }

  /**
   * @return the wake-up queue of {@code l}'s key, fed by its watch
   */
  static FairReleaseQueue queue(KubernetesLockStack l) {
    return l.watch().orElseThrow().releaseSignal(l.nodeLock().key());
  }

  /**
   * @return a watch of the default key, started and synced (first LIST done, stream open)
   */
  private static NodeLockWatch startedWatch(io.kubernetes.client.openapi.ApiClient client)
      throws InterruptedException {
    NodeLockWatch watch = NodeLockWatch.builder(client).build();
    watch.releaseSignal(NodeLock.DEFAULT_KEY);
    watch.start();
    assertThat(watch.awaitSynced(Duration.ofSeconds(5))).isTrue();
    return watch;
  }

  /**
   * @return a fresh node of the emulator
   */
  private static String nodeFor(String prefix) {
    return cluster.node(Cluster.unique(prefix));
  }

  /** Waits until {@code n} waiters are inside the queue's wait for {@code node}, not yet woken. */
  static void awaitWaiting(FairReleaseQueue signal, String node, int n)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (signal.waiting(node) < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waiters did not queue: " + signal.waiting(node) + " of " + n);
      }
      Thread.sleep(2);
    }
  }

  /** Waits until the watch's view shows {@code node} locked ({@code true}) or free. */
  static void awaitObserved(ReleaseFeeder watch, String node, boolean locked)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (watch.observedLockValue(node, NodeLock.DEFAULT_KEY).isPresent() != locked) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "watch did not observe node " + node + (locked ? " locked" : " free"));
      }
      Thread.sleep(2);
    }
  }

  static void awaitDisconnected(ReleaseFeeder watch) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (watch.isConnected()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("watch did not disconnect");
      }
      Thread.sleep(2);
    }
  }

  static void awaitConnected(ReleaseFeeder watch) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!watch.isConnected()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("watch did not reconnect");
      }
      Thread.sleep(5);
    }
  }
}
