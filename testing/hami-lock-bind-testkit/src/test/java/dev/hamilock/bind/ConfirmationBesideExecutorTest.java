package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ForkedRead;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
      new ForwardingLockStore(cluster.lockStore()) {
        @Override
        public Optional<String> read(String node, String key) throws LockBackendException {
          confirmations.incrementAndGet();
          return super.read(node, key);
        }
      };

  PodBinder binder() {
    NodeLock lock = Fixtures.lockOver(counting, cluster, CLOCK, LOCK_KEY);
    return PodBinder.builder(cluster, cluster, REGISTRY, NodeLockProvider.cached(k -> lock))
        .clock(CLOCK)
        .build();
  }

  PodView filtered() {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 12000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
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
          if (handedOverBy(ForkedRead.class, "start")
              || handedOverBy(BindLocks.class, "confirmBeside")) {
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

  /** Whether this thread is in {@code type.method} (which hands over a wrapper, no Future). */
  static boolean handedOverBy(Class<?> type, String method) {
    return StackWalker.getInstance()
        .walk(
            s ->
                s.anyMatch(
                    f ->
                        f.getClassName().equals(type.getName())
                            && f.getMethodName().equals(method)));
  }
}
