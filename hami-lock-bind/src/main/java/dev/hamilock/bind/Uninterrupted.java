package dev.hamilock.bind;

import java.util.function.Supplier;

/**
 * Runs clean-up work with the thread's interrupt flag cleared, and restores the flag afterwards.
 *
 * <p>An interrupted bind or hand-off (an HTTP server past its deadline, a cancel) is exactly when
 * the clean-up must reach the API server, but the Kubernetes ports refuse every request of an
 * interrupted thread (the lock store's writes answer {@code INTERRUPTED} without sending): a lock
 * release refused so would keep the node locked for a whole lock timeout.
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
