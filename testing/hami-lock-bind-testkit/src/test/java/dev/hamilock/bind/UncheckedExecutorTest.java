package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A caller-supplied executor is a user extension point too: one whose {@code execute} throws an
 * unchecked exception other than {@link RejectedExecutionException} (an executor shut down by a
 * framework that says so with {@code IllegalStateException}, a bug) at the n-th task. A bind
 * answers (no future left pending, nothing thrown but the documented {@code
 * RejectedExecutionException} of a first step), and leaves no lock or bind phase its result does
 * not report; a gang member waiting for a lock another pod holds is tried again from timer and
 * wake-up threads, where an escaping exception has no caller to reach.
 */
class UncheckedExecutorTest {
  private static final String PHASE = "hami.io/bind-phase";
  private static final int MAX_CALL = 12;

  /** Runs tasks on {@code pool}, throwing at the {@code n}-th. */
  private record Buggy(ExecutorService pool, int n, AtomicInteger calls, AtomicBoolean thrown)
      implements Executor {
    Buggy(ExecutorService pool, int n) {
      this(pool, n, new AtomicInteger(), new AtomicBoolean());
    }

    @Override
    public void execute(Runnable task) {
      if (calls.incrementAndGet() == n) {
        thrown.set(true);
        throw new IllegalStateException("injected executor bug at task " + n);
      }
      pool.execute(task);
    }
  }

  @Test
  void anExecutorsUncheckedExceptionAtAnyTaskOfABindIsAnAnswerThatLeavesNothingBehind()
      throws Exception {
    List<String> wrong = new ArrayList<>();
    int reached = 0;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    ScheduledExecutorService releaser = Executors.newSingleThreadScheduledExecutor();
    try (LogCapture log = LogCapture.start()) {
      for (boolean contended : List.of(false, true)) {
        for (int n = 1; n <= MAX_CALL; n++) {
          Buggy ex = new Buggy(pool, n);
          String run = (contended ? "a gang member waiting, " : "") + "task " + n;
          once(ex, run, contended, releaser).ifPresent(wrong::add);
          reached += ex.thrown.get() ? 1 : 0;
        }
      }
      log.expect("WARN dev\\.hamilock\\.");
    } finally {
      pool.shutdownNow();
      releaser.shutdownNow();
    }
    assertThat(reached).as("tasks thrown at").isGreaterThan(MAX_CALL);
    assertThat(wrong).isEmpty();
  }

  private Optional<String> once(
      Buggy ex, String run, boolean contended, ScheduledExecutorService releaser)
      throws InterruptedException {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 =
        cluster
            .addPod(
                contended ? Fixtures.gangPod("p1", 1, 4000, 30) : Fixtures.pod("p1", 1, 4000, 30))
            .view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    ScheduledFuture<Boolean> released = null;
    if (contended) { // another pod holds n1's lock for 60 ms
      PodView h = cluster.addPod(Fixtures.pod("holder", 1, 1000, 10)).view();
      NodeLock lock = Fixtures.lock(cluster, Fixtures.LOCK_KEY);
      LockOwner owner = LockOwner.of(NS, "holder", h.uid());
      try {
        lock.acquire("n1", owner);
      } catch (Exception e) {
        throw new AssertionError(e);
      }
      released =
          releaser.schedule(
              () -> {
                try {
                  return lock.release("n1", owner);
                } catch (Exception e) {
                  return false;
                }
              },
              60,
              TimeUnit.MILLISECONDS);
    }
    CompletableFuture<BindResult> f;
    try {
      f =
          Fixtures.binder(cluster)
              .retryPolicy(
                  dev.hamilock.core.RetryPolicy.builder()
                      .pollInterval(java.time.Duration.ofMillis(5))
                      .retryTimeout(java.time.Duration.ofSeconds(2))
                      .build())
              .build()
              .bindAsync(NS, "p1", p1.uid(), "n1", ex);
    } catch (RuntimeException e) {
      return Optional.of(run + ": bindAsync threw " + e);
    }
    BindResult r;
    try {
      r = f.get(5, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      return Optional.of(run + ": no answer after 5 s, the lock " + lockValue(cluster, "n1"));
    } catch (ExecutionException e) {
      boolean clean =
          e.getCause() instanceof RejectedExecutionException
              && !annotations(cluster, "p1").containsKey(PHASE)
              && !"p1".equals(holderOf(cluster));
      return clean ? Optional.empty() : Optional.of(run + ": completed with " + e.getCause());
    }
    if (released != null) { // the holder's release, if it comes after the answer
      try {
        released.get(5, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        throw new AssertionError("the holder's release did not run", e);
      }
    }
    Map<String, String> left = annotations(cluster, "p1");
    boolean bound =
        cluster.pods().stream()
            .anyMatch(p -> p.view().name().equals("p1") && p.nodeName().isPresent());
    boolean reported = r.locksHeld() && !r.cleanupProblems().isEmpty();
    return switch (r.outcome()) {
      case BOUND -> bound ? Optional.empty() : Optional.of(run + ": BOUND but not bound");
      case UNKNOWN -> Optional.empty();
      default ->
          bound
                  || ("p1".equals(holderOf(cluster)) && !reported)
                  || (left.containsKey(PHASE) && !reported)
              ? Optional.of(
                  "%s: %s (%s) left bound=%s, the lock %s, bind phase %s"
                      .formatted(
                          run,
                          r.outcome(),
                          r.reason(),
                          bound,
                          lockValue(cluster, "n1"),
                          left.get(PHASE)))
              : Optional.empty();
    };
  }

  private static String holderOf(InMemoryCluster cluster) {
    String v = lockValue(cluster, "n1");
    return v == null ? null : v.split(",")[2];
  }
}
