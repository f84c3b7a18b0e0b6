package dev.hamilock.bind;

import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.core.watch.ListAndWatch;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** The stack's watched pods ({@link HamiStack.Builder#watchedPods}) and the loop feeding them. */
final class StackPodWatch {
  final WatchedPods pods = new WatchedPods();
  private final ListAndWatch loop;

  StackPodWatch(ListAndWatch.Transport transport) {
    this.loop = ListAndWatch.of("pod watch", "/api/v1/pods", transport, pods.sink());
  }

  void start() {
    loop.start();
  }

  void close() {
    loop.close();
  }

  /**
   * {@link WatchedPods#awaitListed} until {@code deadline} ({@link System#nanoTime()}), in slices
   * of at most 100 ms: false once {@code closed} (the store is not told of the stack's close(), and
   * a watch that never lists would otherwise hold the caller until the deadline).
   */
  boolean awaitListed(long deadline, BooleanSupplier closed) throws InterruptedException {
    while (!closed.getAsBoolean()) {
      long left = deadline - System.nanoTime();
      if (pods.awaitListed(Duration.ofNanos(Math.max(0, Math.min(left, 100_000_000L))))) {
        return true;
      }
      if (left <= 100_000_000L) {
        return false;
      }
    }
    return false;
  }
}
