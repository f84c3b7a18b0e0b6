package dev.hamilock.testkit;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Bounded polling for conditions reached asynchronously (informers, thread exits). */
final class Await {
  private Await() {}

  static void until(String what, Duration limit, BooleanSupplier condition) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("condition not reached within " + limit + ": " + what);
      }
      LockSupport.parkNanos(5_000_000);
    }
  }
}
