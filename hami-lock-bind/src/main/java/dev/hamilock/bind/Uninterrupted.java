package dev.hamilock.bind;

import java.util.function.Supplier;

/**
 * Runs clean-up work with the interrupt flag cleared, then restores it: the ports refuse an
 * interrupted thread, and a refused lock release would keep the node locked one lock timeout.
 */
final class Uninterrupted {
  private Uninterrupted() {}

  /** {@code work}'s result; the interrupt flag is set again if it was set on entry. */
  static <T> T call(Supplier<T> work) {
    boolean interrupted = Thread.interrupted();
    try {
      return work.get();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
