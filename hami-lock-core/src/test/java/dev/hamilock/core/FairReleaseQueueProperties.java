package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.hamilock.testing.generators.Props;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * Properties of the fair per-node wake-up queue, and their teeth.
 *
 * <ul>
 *   <li>Model-based: any sequence of joins, releases, wake-alls, waits, drains and closes on two
 *       nodes answers exactly as a list of waiters in arrival order does, where a release hands one
 *       wake-up to the oldest waiter without one, and a close passes an unused one on — so the wake
 *       order is FIFO per node, no release is lost while a waiter without a wake-up is queued, a
 *       closed waiter is never handed one, and once every waiter closed no node entry is left (no
 *       leak).
 *   <li>Concurrent: waiters waiting on their own threads in short slices (busy in between) are
 *       woken one per release, oldest first, none twice, none lost.
 *   <li>Falsification (kept as tests): the model property finds a counterexample when the queue's
 *       release is made wake-everyone, and when close does not leave the queue.
 * </ul>
 */
class FairReleaseQueueProperties {

  /** What the properties drive: the real queue, or a mutant of it. */
  interface Subject {
    Waiter join(String node);

    boolean released(String node);

    int wakeAll(String node);

    int trackedNodes();
  }

  static Subject real() {
    FairReleaseQueue q = FairReleaseQueue.create();
    return new Subject() {
      @Override
      public Waiter join(String node) {
        return q.join(node);
      }

      @Override
      public boolean released(String node) {
        return q.released(node);
      }

      @Override
      public int wakeAll(String node) {
        return q.wakeAll(node);
      }

      @Override
      public int trackedNodes() {
        return q.trackedNodes();
      }
    };
  }

  /** Mutant: a release wakes every waiter of the node (the old notifier's herd). */
  static Subject wakeEveryone() {
    FairReleaseQueue q = FairReleaseQueue.create();
    return new Subject() {
      @Override
      public Waiter join(String node) {
        return q.join(node);
      }

      @Override
      public boolean released(String node) {
        return q.wakeAll(node) > 0;
      }

      @Override
      public int wakeAll(String node) {
        return q.wakeAll(node);
      }

      @Override
      public int trackedNodes() {
        return q.trackedNodes();
      }
    };
  }

  /** Mutant: close marks the handle closed but leaves it in the queue. */
  static Subject closeDoesNotDequeue() {
    FairReleaseQueue q = FairReleaseQueue.create();
    return new Subject() {
      @Override
      public Waiter join(String node) {
        Waiter w = q.join(node);
        return new Waiter() {
          @Override
          public String node() {
            return w.node();
          }

          @Override
          public java.util.concurrent.CompletableFuture<Boolean> awaitAsync(Duration timeout) {
            return w.awaitAsync(timeout);
          }

          @Override
          public boolean drain() {
            return w.drain();
          }

          @Override
          public void close() {
            // the mutation: never leaves the queue
          }
        };
      }

      @Override
      public boolean released(String node) {
        return q.released(node);
      }

      @Override
      public int wakeAll(String node) {
        return q.wakeAll(node);
      }

      @Override
      public int trackedNodes() {
        return q.trackedNodes();
      }
    };
  }

  /** Operations: code {@code v % 6}, target {@code v / 6} (node by parity, waiter by index). */
  static Gen<List<Integer>> operations() {
    return lists().of(integers().between(0, 599)).ofSizeBetween(1, 80);
  }

  private static final class Modelled {
    final Waiter handle;
    boolean wakeUp;

    Modelled(Waiter handle) {
      this.handle = handle;
    }
  }

  /** Runs {@code ops} on {@code subject} and on the model, comparing every answer. */
  static void matchesTheModel(Subject subject, List<Integer> ops) throws InterruptedException {
    Map<String, List<Modelled>> model = new HashMap<>();
    model.put("n", new ArrayList<>());
    model.put("m", new ArrayList<>());
    for (int step = 0; step < ops.size(); step++) {
      int v = ops.get(step);
      int code = v % 6;
      int target = v / 6;
      String node = target % 2 == 0 ? "n" : "m";
      List<Modelled> queue = model.get(node);
      String at = "step " + step + " (" + code + " on " + node + ") of " + ops;
      switch (code) {
        case 0 -> queue.add(new Modelled(subject.join(node)));
        case 1 -> {
          boolean expected = handToOldest(queue);
          assertThat(subject.released(node)).as("release handed, " + at).isEqualTo(expected);
        }
        case 2 -> {
          int expected = 0;
          for (Modelled m : queue) {
            if (!m.wakeUp) {
              m.wakeUp = true;
              expected++;
            }
          }
          assertThat(subject.wakeAll(node)).as("wake-all count, " + at).isEqualTo(expected);
        }
        case 3, 4, 5 -> {
          if (queue.isEmpty()) {
            continue;
          }
          Modelled m = queue.get((target / 2) % queue.size());
          if (code == 5) {
            queue.remove(m);
            m.handle.close();
            if (m.wakeUp) {
              handToOldest(queue);
            }
          } else {
            boolean expected = m.wakeUp;
            m.wakeUp = false;
            boolean actual = code == 3 ? m.handle.await(Duration.ZERO) : m.handle.drain();
            assertThat(actual)
                .as((code == 3 ? "await" : "drain") + " of waiter " + queue.indexOf(m) + ", " + at)
                .isEqualTo(expected);
          }
        }
        default -> throw new IllegalStateException("code " + code);
      }
    }
    for (List<Modelled> queue : model.values()) {
      queue.forEach(m -> m.handle.close());
    }
    assertThat(subject.trackedNodes())
        .as("node entries left after every waiter closed, " + ops)
        .isZero();
  }

  private static boolean handToOldest(List<Modelled> queue) {
    for (Modelled m : queue) {
      if (!m.wakeUp) {
        m.wakeUp = true;
        return true;
      }
    }
    return false;
  }

  @Test
  void anySequenceOfOperationsAnswersAsTheFifoModel() {
    Props.qt(400)
        .forAll(operations())
        .checkAssert(ops -> Props.unchecked(() -> matchesTheModel(real(), ops)));
  }

  @Test
  void falsificationWakeEveryoneBreaksTheModel() {
    Props.Falsified f =
        Props.expectFalsified(
            400,
            qt ->
                qt.forAll(operations())
                    .checkAssert(
                        ops -> Props.unchecked(() -> matchesTheModel(wakeEveryone(), ops))));
    assertThat(f.cause()).isInstanceOf(AssertionError.class);
  }

  @Test
  void falsificationCloseThatDoesNotDequeueBreaksTheModel() {
    Props.Falsified f =
        Props.expectFalsified(
            400,
            qt ->
                qt.forAll(operations())
                    .checkAssert(
                        ops -> Props.unchecked(() -> matchesTheModel(closeDoesNotDequeue(), ops))));
    assertThat(f.cause()).isInstanceOf(AssertionError.class);
  }

  /**
   * {@code waiters} handles joined in order, each awaited on its own thread in short slices with
   * busy gaps between them; {@code releases} releases fired while they run. Exactly the {@code
   * releases} oldest are woken, each once; the others time out; nothing is left behind.
   */
  static void concurrentReleasesWakeTheOldestOncePerRelease(int waiters, int releases, long seed)
      throws Exception {
    FairReleaseQueue q = FairReleaseQueue.create();
    List<Waiter> handles = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      handles.add(q.join("n"));
    }
    ExecutorService pool = Executors.newFixedThreadPool(waiters);
    LinkedBlockingQueue<Integer> woken = new LinkedBlockingQueue<>();
    AtomicInteger stop = new AtomicInteger();
    CountDownLatch started = new CountDownLatch(waiters);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < waiters; i++) {
        int index = i;
        java.util.Random random = new java.util.Random(seed + i);
        futures.add(
            pool.submit(
                () -> {
                  started.countDown();
                  while (stop.get() == 0) {
                    if (handles.get(index).await(Duration.ofNanos(1 + random.nextInt(2_000_000)))) {
                      woken.add(index);
                      return null;
                    }
                    if (random.nextBoolean()) {
                      Thread.yield(); // busy between waits, as during an attempt
                    }
                  }
                  return null;
                }));
      }
      started.await();
      for (int r = 0; r < releases; r++) {
        assertThat(q.released("n")).as("release " + r + " handed to a queued waiter").isTrue();
        // the next release only after this one was consumed: the order is then observable
        Integer who = woken.poll(10, TimeUnit.SECONDS);
        assertThat(who).as("woken by release " + r).isEqualTo(r);
        handles.get(who).close(); // it acquired: leaves the queue
      }
      assertThat(woken.poll(20, TimeUnit.MILLISECONDS))
          .as("nobody woken without a release")
          .isNull();
      stop.set(1);
      for (Future<?> f : futures) {
        f.get(10, TimeUnit.SECONDS);
      }
      assertThat(woken).isEmpty();
    } finally {
      stop.set(1);
      pool.shutdownNow();
      handles.forEach(Waiter::close);
    }
    assertThat(q.trackedNodes()).isZero();
  }

  @Test
  void concurrentWaitersAreWokenOldestFirstOncePerReleaseNoneLost() {
    Props.qt(15)
        .withShrinkCycles(10)
        .forAll(integers().between(1, 8), integers().between(0, 8), integers().all())
        .checkAssert(
            (waiters, releases, seed) ->
                Props.unchecked(
                    () ->
                        concurrentReleasesWakeTheOldestOncePerRelease(
                            waiters, Math.min(waiters, releases), seed)));
  }
}
