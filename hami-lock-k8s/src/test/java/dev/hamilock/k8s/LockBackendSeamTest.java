package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.core.store.LockStore;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The lock stack's backend seam (issue 27 item 4) and its settings taken whole from core (item 3):
 * another backend plugs in without the cluster, the settings' wait clock times the stack's acquire
 * loop (no stack could set it before), and the default request timeout follows the extender HTTP
 * timeout (the rule lived in the extender example before).
 */
class LockBackendSeamTest {
  private static final String NODE = "gpu-1";

  /** No API server behind it: a request through it would fail the test. */
  private static final ApiClient NO_SERVER = new ApiClient().setBasePath("http://127.0.0.1:9");

  @Test
  void anotherBackendPlugsIntoTheLockStackWithoutTheCluster() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    List<String> keys = new ArrayList<>();
    LockBackend backend =
        new LockBackend(
            (key, releases) -> {
              keys.add(key + (releases.isPresent() ? " fed" : " polled"));
              return store;
            },
            Optional.empty(),
            OwnerLiveness.assumeAlive());
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(NO_SERVER).backend(backend).environment(Map.of()).build()) {
      assertThat(locks.nodeLock().acquire(NODE, LockOwner.of("default", "p")))
          .isEqualTo(AcquireOutcome.ACQUIRED);
      assertThat(store.read(NODE, NodeLock.DEFAULT_KEY))
          .hasValueSatisfying(v -> assertThat(v).endsWith(",default,p"));
      assertThat(keys).containsExactly(NodeLock.DEFAULT_KEY + " polled");
      assertThat(locks.store()).isSameAs(store);
      assertThat(locks.watch()).isEmpty();
    }
  }

  @Test
  void theSettingsWaitClockTimesTheStacksAcquireLoop() throws Exception {
    InMemoryLockStore memory = new InMemoryLockStore();
    memory.createIfAbsent(
        NODE,
        NodeLock.DEFAULT_KEY,
        LockRecordCodec.format(LockRecord.of(Instant.now(), LockOwner.of("default", "holder"))));
    LockStore store = pollOnly(memory); // no release signal: every wait is a poll on the clock
    VirtualWaits time = new VirtualWaits();
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(NO_SERVER)
            .backend(
                new LockBackend((k, r) -> store, Optional.empty(), OwnerLiveness.assumeAlive()))
            .environment(Map.of())
            .retryPolicy(RetryPolicy.builder().retryTimeout(Duration.ofSeconds(2)).build())
            .waitClock(time)
            .build()) {
      assertThatThrownBy(
              () ->
                  locks
                      .acquirer()
                      .acquire(
                          NODE, LockOwner.of("default", "member"), true, List.of(locks.nodeLock())))
          .isInstanceOf(LockWaitTimeoutException.class);
      assertThat(time.sleeps())
          .as("the gang member's polls slept on the settings' clock")
          .isPositive();
      assertThat(time.elapsed()).isGreaterThanOrEqualTo(Duration.ofSeconds(2).toNanos());
    }
  }

  @Test
  void requestTimeoutDefaultIsHalfAShortExtenderHttpTimeout() {
    LockStackSettings shortHttp =
        LockStackSettings.builder()
            .environment(Map.of())
            .retryPolicy(
                RetryPolicy.builder()
                    .retryTimeout(Duration.ofSeconds(5))
                    .extenderHttpTimeout(Duration.ofSeconds(12))
                    .build())
            .build();
    assertThat(shortHttp.requestTimeout()).isEqualTo(Duration.ofSeconds(6));
    assertThat(LockStackSettings.builder().environment(Map.of()).build().requestTimeout())
        .as("HAMi's 30 s extender timeout: 10 s")
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(
            LockStackSettings.builder()
                .settings(shortHttp)
                .requestTimeout(Duration.ofSeconds(3))
                .build()
                .requestTimeout())
        .as("an explicit request timeout wins")
        .isEqualTo(Duration.ofSeconds(3));
  }

  private static LockStore pollOnly(LockStore s) {
    return new LockStore() {
      @Override
      public Optional<String> read(String node, String key) throws LockBackendException {
        return s.read(node, key);
      }

      @Override
      public CasResult createIfAbsent(String node, String key, String value)
          throws LockBackendException {
        return s.createIfAbsent(node, key, value);
      }

      @Override
      public CasResult replaceIfEquals(String node, String key, String expected, String value)
          throws LockBackendException {
        return s.replaceIfEquals(node, key, expected, value);
      }

      @Override
      public boolean deleteIfEquals(String node, String key, String expected)
          throws LockBackendException {
        return s.deleteIfEquals(node, key, expected);
      }
    };
  }

  /** Virtual time of one thread: every sleep and wait advances it at once. */
  private static final class VirtualWaits implements WaitClock {
    private static final long ORIGIN = 1_000_000_000_000L;
    private long now = ORIGIN;
    private int sleeps;

    @Override
    public synchronized long nanoTime() {
      return now;
    }

    @Override
    public synchronized void sleepNanos(long nanos) {
      sleeps++;
      now += nanos;
    }

    @Override
    public long randomBelow(long bound) {
      return bound - 1;
    }

    synchronized int sleeps() {
      return sleeps;
    }

    synchronized long elapsed() {
      return now - ORIGIN;
    }
  }
}
