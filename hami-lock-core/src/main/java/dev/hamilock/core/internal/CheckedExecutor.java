package dev.hamilock.core.internal;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Where a caller's {@link Executor} enters a flow: an unchecked exception of its {@code execute}
 * other than {@link RejectedExecutionException} (an executor shut down that says so with {@code
 * IllegalStateException}, a bug) is that rejection, the one the flows answer, so it never escapes a
 * timer or wake-up thread and leaves a call without an answer.
 */
public final class CheckedExecutor implements Executor {
  private final Executor executor;

  private CheckedExecutor(Executor executor) {
    this.executor = executor;
  }

  /**
   * @throws NullPointerException naming {@code executor} if null
   */
  public static Executor of(Executor executor) {
    Objects.requireNonNull(executor, "executor");
    return executor instanceof CheckedExecutor ? executor : new CheckedExecutor(executor);
  }

  @Override
  public void execute(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new RejectedExecutionException("executor " + executor + " threw " + e, e);
    }
  }

  @Override
  public String toString() {
    return executor.toString();
  }
}
