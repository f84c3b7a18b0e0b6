package dev.hamilock.micrometer;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLockListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * Node lock meters fed by hami-lock-core's {@link NodeLockListener} (issue 15 item 8, issue 16 item
 * 7), for any scheduler that embeds the lock — the extender, a scheduler-plugins port, a custom
 * scheduler. Prometheus names (Micrometer's naming convention) in brackets:
 *
 * <ul>
 *   <li>{@code hami.lock.acquired} [{@code hami_lock_acquired_total}], tags {@code key} (the vendor
 *       lock annotation, e.g. {@code hami.io/mutex.lock}) and {@code outcome} ({@code acquired},
 *       {@code reentered}, {@code took_over_expired}, {@code took_over_dangling});
 *   <li>{@code hami.lock.contention} [{@code hami_lock_contention_total}], tag {@code key}: an
 *       attempt found the lock held by someone else;
 *   <li>{@code hami.lock.takeovers} [{@code hami_lock_takeovers_total}], tags {@code key} and
 *       {@code reason} ({@code expired}, {@code dangling});
 *   <li>{@code hami.lock.released} [{@code hami_lock_released_total}], tag {@code key};
 *   <li>{@code hami.lock.wait} [{@code hami_lock_wait_seconds}], tag {@code acquired} ({@code
 *       true}/{@code false}): how long a gang member's acquire loop waited, with {@code
 *       hami.lock.wait.attempts} [{@code hami_lock_wait_attempts}] as a distribution.
 * </ul>
 *
 * Node names are not tags (unbounded cardinality). Listener calls never throw into the lock: wrap
 * with {@link NodeLockListener#guarded} if the registry might. Thread-safe.
 */
public final class MicrometerNodeLockListener implements NodeLockListener {
  private final MeterRegistry registry;

  /**
   * @param registry where the meters are registered
   * @throws NullPointerException if {@code registry} is null
   */
  public MicrometerNodeLockListener(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  @Override
  public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
    Counter.builder("hami.lock.acquired")
        .description("node locks acquired, by outcome")
        .tag("key", key)
        .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
        .register(registry)
        .increment();
  }

  @Override
  public void contended(LockContentionException contention) {
    Counter.builder("hami.lock.contention")
        .description("lock attempts that found the lock held")
        .tag("key", contention.key())
        .register(registry)
        .increment();
  }

  @Override
  public void released(String node, String key, LockOwner owner) {
    Counter.builder("hami.lock.released")
        .description("node locks released")
        .tag("key", key)
        .register(registry)
        .increment();
  }

  @Override
  public void takenOver(
      String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {
    Counter.builder("hami.lock.takeovers")
        .description("node locks taken over, by reason")
        .tag("key", key)
        .tag("reason", reason.name().toLowerCase(Locale.ROOT).replace("took_over_", ""))
        .register(registry)
        .increment();
  }

  @Override
  public void waited(
      String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
    Timer.builder("hami.lock.wait")
        .description("time a bind waited for a node lock")
        .tag("acquired", Boolean.toString(acquired))
        .register(registry)
        .record(waited);
    io.micrometer.core.instrument.DistributionSummary.builder("hami.lock.wait.attempts")
        .description("lock attempts of one wait")
        .tag("acquired", Boolean.toString(acquired))
        .register(registry)
        .record(attempts);
  }
}
