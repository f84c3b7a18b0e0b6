package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Spec §1.5–1.8 and §7 items 1–16; vectors V08–V18, V24 against the in-memory backend. */
class StoreNodeLockTest {

  private static final String KEY = "hami.io/mutex.lock";
  private static final String NODE = "worker-3";
  private static final LockOwner HAMI = LockOwner.of("hami-ns", "hami");
  private static final LockOwner OTHER = LockOwner.of("other-ns", "other-pod");

  private final MutableClock clock = new MutableClock("2026-08-01T06:00:00Z");
  private final CountingStore store = new CountingStore();
  private final Map<LockOwner, OwnerLiveness.State> pods = new HashMap<>();
  private final List<String> events = new ArrayList<>();

  private StoreNodeLock lock() {
    return lock(Duration.ofMinutes(5));
  }

  private StoreNodeLock lock(Duration timeout) {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .lockTimeout(timeout)
            .clock(clock)
            .ownerLiveness(
                o ->
                    pods.getOrDefault(
                        LockOwner.of(o.namespace(), o.name()), OwnerLiveness.State.NOT_FOUND))
            .listener(
                new NodeLockListener() {
                  @Override
                  public void acquired(
                      String node, String key, LockOwner owner, AcquireOutcome outcome) {
                    events.add("acquired " + owner.name() + " " + outcome);
                  }

                  @Override
                  public void contended(LockContentionException contention) {
                    events.add("contended " + contention.holderValue().orElse("?"));
                  }

                  @Override
                  public void released(String node, String key, LockOwner owner) {
                    events.add("released " + owner.name());
                  }

                  @Override
                  public void takenOver(
                      String node,
                      String key,
                      LockOwner owner,
                      String previous,
                      AcquireOutcome reason) {
                    events.add("takenOver " + previous + " " + reason);
                  }
                })
            .build());
  }

  private void put(String value) {
    store.delegate.createIfAbsent(NODE, KEY, value);
  }

  private Optional<String> value() {
    return store.delegate.read(NODE, KEY);
  }

  @Test
  void v09FreeNodeIsLockedWithOneWriteAndNoRead() throws Exception {
    assertThat(lock().acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(value()).contains("2026-08-01T06:00:00Z,hami-ns,hami");
    assertThat(store.calls()).containsExactly("create");
    assertThat(events).containsExactly("acquired hami ACQUIRED");
  }

  @Test
  void contendedAcquireDecidesFromTheWitnessOfItsCreateWithoutARead() {
    put("2026-08-01T06:00:00Z,other-ns,other-pod");
    pods.put(OTHER, OwnerLiveness.State.ALIVE);
    assertThatThrownBy(() -> lock().acquire(NODE, HAMI))
        .isInstanceOf(LockContentionException.class)
        .hasMessageContaining("other-ns/other-pod");
    assertThat(store.calls()).containsExactly("create");
  }

  @Test
  void aRefusedCreateWhoseWitnessIsAbsentCreatesAgain() throws Exception {
    // a backend that looks after the refusal may find the value already gone
    int[] refusals = {1};
    LockStore vanishing =
        new LockStore() {
          @Override
          public Optional<String> read(String node, String key) {
            return store.read(node, key);
          }

          @Override
          public CasResult createIfAbsent(String node, String key, String value) {
            if (refusals[0]-- > 0) {
              store.calls.add("refused create");
              return CasResult.notWritten(Optional.empty());
            }
            return store.createIfAbsent(node, key, value);
          }

          @Override
          public CasResult replaceIfEquals(String node, String key, String expected, String value) {
            return store.replaceIfEquals(node, key, expected, value);
          }

          @Override
          public boolean deleteIfEquals(String node, String key, String expected)
              throws LockBackendException {
            return store.deleteIfEquals(node, key, expected);
          }
        };
    StoreNodeLock l =
        StoreNodeLock.create(
            vanishing, LockSettings.builder().environment(Map.of()).clock(clock).build());
    assertThat(l.acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(store.calls()).containsExactly("refused create", "create");
  }

  @Test
  void v11V12LiveOtherOwnerContendsWithTypedException() {
    pods.put(OTHER, OwnerLiveness.State.ALIVE);
    put("2026-08-01T05:59:00Z,other-ns,other-pod");
    clock.advance(Duration.ofSeconds(3));
    assertThatThrownBy(() -> lock().acquire(NODE, HAMI))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> {
              assertThat(e.node()).isEqualTo(NODE);
              assertThat(e.key()).isEqualTo(KEY);
              assertThat(e.holderValue()).contains("2026-08-01T05:59:00Z,other-ns,other-pod");
              assertThat(e.holder().flatMap(LockRecord::owner)).contains(OTHER);
              assertThat(e.age()).contains(Duration.ofSeconds(63));
              assertThat(e.getMessage())
                  .contains("has been locked within 5m0s")
                  .contains("2026-08-01T05:59:00Z,other-ns,other-pod")
                  .endsWith(": node lock contention");
            });
    assertThat(value()).contains("2026-08-01T05:59:00Z,other-ns,other-pod");
    LockOwner sameNs = LockOwner.of("hami-ns", "other-pod-same-ns");
    pods.put(sameNs, OwnerLiveness.State.ALIVE);
    store.delegate.deleteIfEquals(NODE, KEY, value().orElseThrow());
    put("2026-08-01T06:00:00Z,hami-ns,other-pod-same-ns");
    assertThatThrownBy(() -> lock().acquire(NODE, HAMI))
        .isInstanceOf(LockContentionException.class);
  }

  @Test
  void v14MessageNamesTheLockTimeoutInGoText() {
    LockOwner holder = LockOwner.of("test-ns", "test-pod");
    pods.put(holder, OwnerLiveness.State.ALIVE);
    put("2026-08-01T06:00:00Z,test-ns,test-pod");
    assertThatThrownBy(
            () -> lock(Duration.ofMinutes(2)).acquire(NODE, LockOwner.of("new-ns", "new-pod")))
        .isInstanceOf(LockContentionException.class)
        .hasMessageContaining("has been locked within 2m0s");
  }

  @Test
  void v15DanglingOwnerIsTakenOverAtOnce() throws Exception {
    put("2026-08-01T06:00:00Z,test-ns,test-pod"); // owner pod absent ⇒ NOT_FOUND
    clock.advance(Duration.ofSeconds(2));
    assertThat(lock().acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
    assertThat(value()).contains("2026-08-01T06:00:02Z,hami-ns,hami");
    assertThat(events)
        .containsExactly(
            "takenOver 2026-08-01T06:00:00Z,test-ns,test-pod TOOK_OVER_DANGLING",
            "acquired hami TOOK_OVER_DANGLING");
  }

  @ParameterizedTest
  @EnumSource(
      value = OwnerLiveness.State.class,
      names = {"NOT_FOUND", "SUCCEEDED", "FAILED", "TERMINATING"})
  void everyGoneStateIsDangling(OwnerLiveness.State state) throws Exception {
    pods.put(OTHER, state);
    put("2026-08-01T06:00:00Z,other-ns,other-pod");
    assertThat(lock().acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
  }

  @Test
  void livenessErrorIsReturnedNeverReadAsGone() {
    put("2026-08-01T06:00:00Z,other-ns,other-pod");
    LockBackendException apiDown =
        new LockBackendException(LockBackendException.Kind.UNAVAILABLE, "apiserver 500", null);
    StoreNodeLock l =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .clock(clock)
                .environment(Map.of())
                .ownerLiveness(
                    o -> {
                      throw apiDown;
                    })
                .build());
    assertThatThrownBy(() -> l.acquire(NODE, HAMI))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE);
              assertThat(e.getCause()).isSameAs(apiDown);
              assertThat(e.getMessage())
                  .contains("2026-08-01T06:00:00Z,other-ns,other-pod")
                  .contains("apiserver 500");
            });
    assertThat(value()).contains("2026-08-01T06:00:00Z,other-ns,other-pod");
  }

  @Test
  void v16ReentryByTheSameOwnerSucceedsAndRestampsTheValue() throws Exception {
    StoreNodeLock l = lock();
    l.acquire(NODE, HAMI);
    clock.advance(Duration.ofSeconds(30));
    assertThat(l.acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.REENTERED);
    assertThat(value()).contains("2026-08-01T06:00:30Z,hami-ns,hami");
    // another process (fresh StoreNodeLock) re-enters a value it did not write
    clock.advance(Duration.ofSeconds(1));
    assertThat(lock().acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.REENTERED);
    assertThat(value()).contains("2026-08-01T06:00:31Z,hami-ns,hami");
  }

  @Test
  void reentryRefreshPreventsExpiringOwnLockDuringALongBind() throws Exception {
    pods.put(HAMI, OwnerLiveness.State.ALIVE);
    StoreNodeLock l = lock(Duration.ofMinutes(5));
    l.acquire(NODE, HAMI);
    clock.advance(Duration.ofMinutes(4));
    l.acquire(NODE, HAMI); // second vendor on the same key, re-stamps
    clock.advance(Duration.ofMinutes(2)); // 6 min after the first stamp, 2 min after the re-stamp
    assertThatThrownBy(() -> lock().acquire(NODE, OTHER))
        .isInstanceOf(LockContentionException.class);
    assertThat(value()).contains("2026-08-01T06:04:00Z,hami-ns,hami");
  }

  @Test
  void uidKnownToBothSidesMustMatchForReentry() throws Exception {
    LockOwner first = LockOwner.of("ns", "sts-0", "uid-1");
    LockOwner recreated = LockOwner.of("ns", "sts-0", "uid-2");
    Map<String, OwnerLiveness.State> byUid = Map.of("uid-1", OwnerLiveness.State.ALIVE);
    StoreNodeLock uidAware =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .clock(clock)
                .environment(Map.of())
                .ownerLiveness(
                    o ->
                        o.uid()
                            .map(u -> byUid.getOrDefault(u, OwnerLiveness.State.NOT_FOUND))
                            .orElse(OwnerLiveness.State.ALIVE))
                .build());
    assertThat(uidAware.acquire(NODE, first)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(uidAware.acquire(NODE, LockOwner.of("ns", "sts-0")))
        .as("uid unknown on one side")
        .isEqualTo(AcquireOutcome.REENTERED);
    assertThat(uidAware.acquire(NODE, first)).isEqualTo(AcquireOutcome.REENTERED);
    // liveness is asked with the old uid, which is alive ⇒ the recreated pod contends
    assertThatThrownBy(() -> uidAware.acquire(NODE, recreated))
        .isInstanceOf(LockContentionException.class);
    assertThat(uidAware.release(NODE, recreated)).as("recreated pod cannot release").isFalse();
    assertThat(value()).isPresent();
    assertThat(uidAware.release(NODE, first)).isTrue();
  }

  @Test
  void v17ExpiryIsStrictlyGreaterThanTheTimeout() throws Exception {
    pods.put(OTHER, OwnerLiveness.State.ALIVE);
    StoreNodeLock l = lock();
    put("2026-08-01T06:00:00Z,other-ns,other-pod");
    assertThatThrownBy(() -> l.acquire(NODE, HAMI))
        .as("fresh")
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(5));
    assertThatThrownBy(() -> l.acquire(NODE, HAMI))
        .as("age == timeout")
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofNanos(1));
    assertThat(l.acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(value()).contains("2026-08-01T06:05:00Z,hami-ns,hami");
  }

  @Test
  void futureTimestampsFromSkewedClocksDoNotExpire() {
    pods.put(OTHER, OwnerLiveness.State.ALIVE);
    put("2026-08-01T07:00:00Z,other-ns,other-pod");
    assertThatThrownBy(() -> lock().acquire(NODE, HAMI))
        .isInstanceOfSatisfying(
            LockContentionException.class, e -> assertThat(e.age()).contains(Duration.ofHours(-1)));
  }

  @Test
  void v17LegacyValuesAreNeverReentrantNorDanglingAndExpireNormally() throws Exception {
    StoreNodeLock l = lock();
    put("2026-08-01T06:00:00Z");
    assertThatThrownBy(() -> l.acquire(NODE, HAMI))
        .isInstanceOf(LockContentionException.class)
        .hasMessageContaining("unknown owner");
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    assertThat(l.acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  @Test
  void ownerlessValueIsNotDanglingCheckedAndExpiresNormally() throws Exception {
    StoreNodeLock l = lock();
    put("2026-08-01T06:00:00Z,,");
    assertThatThrownBy(() -> l.acquire(NODE, HAMI)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(6));
    assertThat(l.acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  @Test
  void v13MalformedValueBlocksUntilOneTimeoutAfterFirstObservationThenIsTakenOver()
      throws Exception {
    StoreNodeLock l = lock();
    put("junk,foo,ns,name");
    clock.advance(Duration.ofHours(3)); // the value's age on the wire is unknowable
    assertThatThrownBy(() -> l.acquire(NODE, HAMI))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> {
              assertThat(e.holderValue()).contains("junk,foo,ns,name");
              assertThat(e.holder()).isEmpty();
              assertThat(e.age()).contains(Duration.ZERO);
              assertThat(e.getMessage()).contains("junk,foo,ns,name").contains("malformed");
              assertThat(e.getCause()).isInstanceOf(MalformedLockException.class);
            });
    clock.advance(Duration.ofMinutes(5));
    assertThatThrownBy(() -> l.acquire(NODE, HAMI))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> assertThat(e.age()).contains(Duration.ofMinutes(5)));
    clock.advance(Duration.ofSeconds(1));
    assertThat(l.acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(value()).contains("2026-08-01T09:05:01Z,hami-ns,hami");
  }

  /**
   * The same malformed text written again after this process saw the node free is a new lock: its
   * lock timeout counts from its new first observation, not from the first appearance of an equal
   * text long ago (which would allow an immediate, premature takeover).
   */
  @Test
  void aMalformedValueThatReappearsAfterTheNodeWasFreeIsCountedAfresh() throws Exception {
    StoreNodeLock l = lock();
    put("lock");
    assertThatThrownBy(() -> l.acquire(NODE, HAMI)).isInstanceOf(LockContentionException.class);
    store.delegate.deleteIfEquals(NODE, KEY, "lock"); // removed by hand
    clock.advance(Duration.ofMinutes(1));
    assertThat(l.acquire(NODE, HAMI))
        .isEqualTo(AcquireOutcome.ACQUIRED); // this process saw it free
    assertThat(l.release(NODE, HAMI)).isTrue();
    clock.advance(Duration.ofMinutes(5));
    put("lock"); // the broken writer again

    assertThatThrownBy(() -> l.acquire(NODE, HAMI))
        .isInstanceOfSatisfying(
            LockContentionException.class, e -> assertThat(e.age()).contains(Duration.ZERO));
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    assertThat(l.acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  @Test
  void readReportsMalformedValuesNamingThem() {
    put("lock");
    assertThatThrownBy(() -> lock().read(NODE))
        .isInstanceOf(MalformedLockException.class)
        .hasMessageContaining("lock");
  }

  @Test
  void readParsesTheRecord() throws Exception {
    assertThat(lock().read(NODE)).isEmpty();
    put("2026-08-01T06:00:00Z,ns,pod-a");
    assertThat(lock().read(NODE).flatMap(LockRecord::owner)).contains(LockOwner.of("ns", "pod-a"));
  }

  @Test
  void v18ReleaseRemovesOnlyTheOwnersLock() throws Exception {
    StoreNodeLock l = lock();
    assertThat(l.release(NODE, HAMI)).as("no lock").isFalse();
    put("2026-08-01T06:00:00Z,namespace,pod");
    assertThat(l.release(NODE, HAMI)).as("someone else's").isFalse();
    assertThat(value()).contains("2026-08-01T06:00:00Z,namespace,pod");
    assertThat(l.release(NODE, LockOwner.of("namespace", "pod"))).isTrue();
    assertThat(value()).isEmpty();
    l.acquire(NODE, HAMI);
    store.calls.clear();
    assertThat(l.release(NODE, HAMI)).isTrue();
    assertThat(store.calls()).as("one request on the happy path").containsExactly("delete");
    assertThat(value()).isEmpty();
  }

  @Test
  void releaseNeverRemovesLegacyOrMalformedValuesUnlikeHami() throws Exception {
    put("2026-07-03T15:35:10+08:00");
    assertThat(lock().release(NODE, HAMI)).isFalse();
    assertThat(value()).contains("2026-07-03T15:35:10+08:00");
    store.delegate.deleteIfEquals(NODE, KEY, "2026-07-03T15:35:10+08:00");
    put("lock-values,hami-ns,hami");
    assertThat(lock().release(NODE, HAMI)).isFalse();
    assertThat(value()).contains("lock-values,hami-ns,hami");
  }

  @Test
  void releaseNeverMatchesBySuffix() throws Exception {
    put("2026-08-01T06:00:00Z,ns,xpod-a");
    assertThat(lock().release(NODE, LockOwner.of("ns", "pod-a"))).isFalse();
    assertThat(lock().release(NODE, LockOwner.of("s", "xpod-a"))).isFalse();
    assertThat(value()).contains("2026-08-01T06:00:00Z,ns,xpod-a");
  }

  @Test
  void v21ReleaseOfAReStampedOwnLockStillReleases() throws Exception {
    StoreNodeLock l = lock();
    l.acquire(NODE, HAMI);
    // another writer re-stamps the same owner's value before our delete lands
    store.beforeNextWrite =
        () ->
            store.delegate.replaceIfEquals(
                NODE,
                KEY,
                "2026-08-01T06:00:00Z,hami-ns,hami",
                "2026-08-01T06:00:01Z,hami-ns,hami");
    assertThat(l.release(NODE, HAMI)).isTrue();
    assertThat(value()).isEmpty();
    assertThat(store.calls()).containsExactly("create", "delete", "read", "delete");
  }

  @Test
  void v19ReleaseKeepsAReplacementByAnotherOwner() throws Exception {
    StoreNodeLock l = lock();
    l.acquire(NODE, HAMI);
    store.beforeNextWrite =
        () ->
            store.delegate.replaceIfEquals(
                NODE, KEY, "2026-08-01T06:00:00Z,hami-ns,hami", "2026-08-01T06:00:00Z,ns,pod-b");
    assertThat(l.release(NODE, HAMI)).isFalse();
    assertThat(value()).contains("2026-08-01T06:00:00Z,ns,pod-b");
  }

  @Test
  void lostTakeoverRaceIsReEvaluatedFromTheWitnessWithoutARead() {
    put("2026-08-01T06:00:00Z,gone-ns,gone"); // dangling: owner not found
    pods.put(OTHER, OwnerLiveness.State.ALIVE);
    Runnable rival =
        () ->
            store.delegate.replaceIfEquals(
                NODE,
                KEY,
                "2026-08-01T06:00:00Z,gone-ns,gone",
                "2026-08-01T06:00:00Z,other-ns,other-pod");
    // our create fails (value present); a live rival takes the dangling lock just before our
    // replace
    store.beforeNextWrite = () -> store.beforeNextWrite = rival;
    assertThatThrownBy(() -> lock().acquire(NODE, HAMI))
        .isInstanceOf(LockContentionException.class)
        .hasMessageContaining("other-ns/other-pod");
    // the refused create's witness decides the takeover, the refused replace's witness the
    // contention
    assertThat(store.calls()).containsExactly("create", "replace");
    assertThat(value()).contains("2026-08-01T06:00:00Z,other-ns,other-pod");
  }

  @Test
  void valueVanishingBetweenCreateAndReadIsRetried() throws Exception {
    put("2026-08-01T06:00:00Z,other-ns,other-pod");
    store.beforeNextWrite =
        () -> store.delegate.deleteIfEquals(NODE, KEY, "2026-08-01T06:00:00Z,other-ns,other-pod");
    // hook runs inside our create, before it: the create then succeeds directly
    assertThat(lock().acquire(NODE, HAMI)).isEqualTo(AcquireOutcome.ACQUIRED);
  }

  @Test
  void v24TwoConcurrentAcquirersOnAFreeNodeExactlyOneWins() throws Exception {
    for (int round = 0; round < 50; round++) {
      InMemoryLockStore s = new InMemoryLockStore();
      StoreNodeLock l =
          StoreNodeLock.create(s, LockSettings.builder().environment(Map.of()).build());
      CountDownLatch go = new CountDownLatch(1);
      LockOwner a = LockOwner.of("ns", "pod-a");
      LockOwner b = LockOwner.of("ns", "pod-b");
      CompletableFuture<Boolean> fa = CompletableFuture.supplyAsync(() -> tryAcquire(l, a, go));
      CompletableFuture<Boolean> fb = CompletableFuture.supplyAsync(() -> tryAcquire(l, b, go));
      go.countDown();
      assertThat(List.of(fa.get(1, TimeUnit.MINUTES), fb.get(1, TimeUnit.MINUTES)))
          .containsExactlyInAnyOrder(true, false);
    }
  }

  private static boolean tryAcquire(NodeLock l, LockOwner o, CountDownLatch go) {
    try {
      go.await();
      l.acquire("n", o);
      return true;
    } catch (LockContentionException e) {
      return false;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void keyIsConfigurableAndLocksOnDifferentKeysAreIndependent() throws Exception {
    StoreNodeLock a =
        StoreNodeLock.create(
            store, LockSettings.builder().environment(Map.of()).clock(clock).build());
    StoreNodeLock b =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .key("cambricon.com/dsmlu.lock")
                .environment(Map.of())
                .clock(clock)
                .build());
    assertThat(a.key()).isEqualTo(NodeLock.DEFAULT_KEY);
    a.acquire(NODE, HAMI);
    assertThat(b.acquire(NODE, OTHER)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(store.delegate.read(NODE, "cambricon.com/dsmlu.lock"))
        .contains("2026-08-01T06:00:00Z,other-ns,other-pod");
  }

  @Test
  void badInputIsRejectedNamingTheArgument() {
    StoreNodeLock l = lock();
    assertThatThrownBy(() -> l.acquire(null, HAMI))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("node");
    assertThatThrownBy(() -> l.acquire("  ", HAMI))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("node");
    assertThatThrownBy(() -> l.acquire(NODE, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("owner");
    assertThatThrownBy(() -> l.release("", HAMI))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("node");
    assertThatThrownBy(() -> l.release(NODE, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("owner");
    assertThatThrownBy(() -> l.read(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("node");
    assertThatThrownBy(() -> StoreNodeLock.create(store, LockSettings.builder().key(" ").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> StoreNodeLock.create(null, LockSettings.defaults()))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("store");
    assertThatThrownBy(
            () ->
                StoreNodeLock.create(
                    store, LockSettings.builder().lockTimeout(Duration.ZERO).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockTimeout");
  }

  @Test
  void v08LockTimeoutPrecedenceExplicitThenEnvThenDefault() {
    assertThat(LockSettings.resolveLockTimeout(Optional.empty(), Map.of()))
        .isEqualTo(Duration.ofMinutes(5));
    assertThat(
            LockSettings.resolveLockTimeout(Optional.empty(), Map.of("HAMI_NODELOCK_EXPIRE", "")))
        .as("empty keeps the default")
        .isEqualTo(Duration.ofMinutes(5));
    assertThat(
            LockSettings.resolveLockTimeout(
                Optional.empty(), Map.of("HAMI_NODELOCK_EXPIRE", "10m")))
        .isEqualTo(Duration.ofMinutes(10));
    assertThat(
            LockSettings.resolveLockTimeout(
                Optional.empty(), Map.of("HAMI_NODELOCK_EXPIRE", "1h30m")))
        .isEqualTo(Duration.ofMinutes(90));
    assertThat(
            LockSettings.resolveLockTimeout(
                Optional.of(Duration.ofSeconds(42)), Map.of("HAMI_NODELOCK_EXPIRE", "10m")))
        .isEqualTo(Duration.ofSeconds(42));
    assertThat(
            StoreNodeLock.create(
                    store,
                    LockSettings.builder()
                        .environment(Map.of("HAMI_NODELOCK_EXPIRE", "300s"))
                        .build())
                .lockTimeout())
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void v08UnparsableEnvIsAConfigurationErrorNotSilentlyIgnored() {
    // HAMi logs and keeps the default; this library refuses to start with a typo
    assertThatThrownBy(
            () ->
                StoreNodeLock.create(
                    store,
                    LockSettings.builder()
                        .environment(Map.of("HAMI_NODELOCK_EXPIRE", "notaduration"))
                        .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("HAMI_NODELOCK_EXPIRE")
        .hasMessageContaining("notaduration");
    assertThatThrownBy(
            () ->
                StoreNodeLock.create(
                    store,
                    LockSettings.builder()
                        .environment(Map.of("HAMI_NODELOCK_EXPIRE", "-5m"))
                        .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-5m");
    assertThatThrownBy(
            () ->
                StoreNodeLock.create(
                    store,
                    LockSettings.builder()
                        .environment(Map.of("HAMI_NODELOCK_EXPIRE", "0"))
                        .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("positive");
  }

  @Test
  void inMemoryFactoryUsesTheDefaultKeyAndASignal() {
    NodeLock l =
        StoreNodeLock.create(
            new InMemoryLockStore(), LockSettings.builder().environment(Map.of()).build());
    assertThat(l.key()).isEqualTo(KEY);
    assertThat(l.lockTimeout()).isEqualTo(Duration.ofMinutes(5));
    assertThat(l.releaseSignal()).isPresent();
  }

  @Test
  void releaseNotifiesTheSignal() throws Exception {
    StoreNodeLock l = lock();
    l.acquire(NODE, HAMI);
    try (dev.hamilock.core.Waiter w = l.releaseSignal().orElseThrow().join(NODE)) {
      l.release(NODE, HAMI);
      assertThat(w.await(Duration.ZERO)).isTrue();
    }
    assertThat(events).containsExactly("acquired hami ACQUIRED", "released hami");
  }

  @Test
  void instantsAreWrittenInUtcWholeSeconds() throws Exception {
    MutableClock fractional = new MutableClock("2026-08-01T06:00:00.999Z");
    StoreNodeLock.create(
            store, LockSettings.builder().clock(fractional).environment(Map.of()).build())
        .acquire(NODE, HAMI);
    assertThat(value()).contains("2026-08-01T06:00:00Z,hami-ns,hami");
  }
}
