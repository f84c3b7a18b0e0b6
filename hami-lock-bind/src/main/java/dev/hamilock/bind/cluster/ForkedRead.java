package dev.hamilock.bind.cluster;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;

/**
 * A read started on an executor beside the caller's own reads: {@link #start} hands it to the
 * executor if there is one and it takes it; {@link #join} runs it on the calling thread if no
 * thread has started it yet, so a full or absent pool reads in sequence and never deadlocks.
 */
public final class ForkedRead {
  private ForkedRead() {}

  /**
   * @param executor where to run {@code read}; null: run by {@link #join}
   * @return the started (or deferred) read
   */
  public static <T> FutureTask<T> start(Executor executor, KubernetesWire.ClusterCall<T> read) {
    FutureTask<T> task = new FutureTask<>(read::call);
    try {
      if (executor != null) {
        // not the task itself: an executor's owner may cancel the Futures it queued (shutdownNow)
        executor.execute(task::run);
      }
    } catch (RejectedExecutionException e) {
      // run by join on the calling thread
    }
    return task;
  }

  /**
   * @return the read's value, run here if no thread has started it yet
   * @throws ClusterException the read's, or {@link ClusterException.Kind#INTERRUPTED}
   */
  public static <T> T join(FutureTask<T> task) throws ClusterException {
    task.run(); // no-op if started or done elsewhere
    try {
      return task.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ClusterException(ClusterException.Kind.INTERRUPTED, "interrupted while reading", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ClusterException ce) {
        throw ce;
      } else if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw (RuntimeException) e.getCause(); // a ClusterCall throws nothing else
    }
  }
}
