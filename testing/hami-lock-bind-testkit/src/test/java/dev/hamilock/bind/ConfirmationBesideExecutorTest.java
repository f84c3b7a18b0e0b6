package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (breaker) of the confirmation begun beside the pod LISTs: a pool too small to run it
 * beside the bind, or one that rejects it, neither deadlocks nor skips it; it runs once, on the
 * bind's thread, before the Binding.
 */
class ConfirmationBesideExecutorTest {

  final InMemoryCluster cluster = InMemoryCluster.create();
  final AtomicInteger confirmations = new AtomicInteger();

  /** The cluster's lock store counting reads (only the confirmation reads it here). */
  final LockStore counting =
      new LockStore() {
        @Override
        public Optional<String> read(String node, String key) throws LockBackendException {
          confirmations.incrementAndGet();
          return cluster.lockStore().read(node, key);
        }

        @Override
        public CasResult createIfAbsent(String node, String key, String value)
            throws LockBackendException {
          return cluster.lockStore().createIfAbsent(node, key, value);
        }

        @Override
        public CasResult replaceIfEquals(String node, String key, String expected, String value)
            throws LockBackendException {
          return cluster.lockStore().replaceIfEquals(node, key, expected, value);
        }

        @Override
        public boolean deleteIfEquals(String node, String key, String expected)
            throws LockBackendException {
          return cluster.lockStore().deleteIfEquals(node, key, expected);
        }
      };

  PodBinder binder() {
    NodeLock lock =
        StoreNodeLock.create(
            counting,
            LockSettings.builder()
                .key(LOCK_KEY)
                .lockTimeout(Duration.ofMinutes(5))
                .clock(CLOCK)
                .ownerLiveness(cluster.ownerLiveness())
                .build());
    return PodBinder.builder(cluster, cluster, REGISTRY, NodeLockProvider.cached(k -> lock))
        .clock(CLOCK)
        .build();
  }

  PodView filtered() {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 12000, 30)).view();
    assertThat(
            ExtenderFilter.builder(cluster, REGISTRY)
                .writeAnnotations(cluster)
                .build()
                .filter(p1, List.of("n1"))
                .node())
        .contains("n1");
    return p1;
  }

  @Test
  void aSingleThreadPoolRunsTheConfirmationOnTheBindsThreadOnce() throws Exception {
    PodView p1 = filtered();
    ExecutorService one = Executors.newSingleThreadExecutor();
    BindResult r;
    try {
      r = binder().bindAsync(NS, "p1", p1.uid(), "n1", one).get(10, TimeUnit.SECONDS);
    } finally {
      one.shutdownNow();
    }
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(confirmations).hasValue(1);
    assertThat(lockValue(cluster, "n1")).as("kept for the device plugin").isNotNull();
  }

  @Test
  void aRejectedConfirmationRunsBeforeTheBindingOnTheBindsThread() throws Exception {
    PodView p1 = filtered();
    ExecutorService one = Executors.newSingleThreadExecutor();
    AtomicInteger rejected = new AtomicInteger();
    Executor firstOnly = // the flow's steps run, its forked reads and confirmation are rejected
        task -> {
          if (task instanceof FutureTask<?>) {
            rejected.incrementAndGet();
            throw new RejectedExecutionException("full");
          }
          one.execute(task);
        };
    BindResult r;
    try {
      r = binder().bindAsync(NS, "p1", p1.uid(), "n1", firstOnly).get(10, TimeUnit.SECONDS);
    } finally {
      one.shutdownNow();
    }
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(rejected).hasPositiveValue();
    assertThat(confirmations).hasValue(1);
  }
}
