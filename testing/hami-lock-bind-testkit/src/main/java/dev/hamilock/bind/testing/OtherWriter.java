package dev.hamilock.bind.testing;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The other writer of issue 23 fault 1 as an actor of a {@link ScenarioRunner} run: an operator's
 * {@code kubectl annotate node NODE hami.io/mutex.lock-}, a forced {@code hami-lock-doctor unlock},
 * HAMi's Go scheduler taking a stamp over by its own clock. It removes the node lock ({@link
 * ScenarioBackend#removeLockAsAnotherWriter}) once per pod that asks for it ({@link
 * Scenario.PodSpec#lockRemoval()}), at the moment asked, seen through the binder's ports:
 *
 * <ul>
 *   <li>{@link Scenario.LockRemoval#BEFORE_CONFIRMATION}: when the binder, holding the lock, has
 *       read the pods assigned to the node (its re-fit's usage read), before it writes its
 *       allocation and confirms the lock; then the binder pauses so that other binders may take the
 *       free lock;
 *   <li>{@link Scenario.LockRemoval#AFTER_CONFIRMATION}: when the binder POSTs the Binding, after
 *       its last confirmation;
 *   <li>{@link Scenario.LockRemoval#SKEWED_TAKEOVER}: at the moment of {@code BEFORE_CONFIRMATION},
 *       HAMi's scheduler on a clock ahead by the lock timeout and a second takes the lock over
 *       ({@link ScenarioBackend#takeOverLockWithSkewedClock}) and, on its own thread, holds it for
 *       {@code hold} before releasing it ({@link ScenarioBackend#releaseSkewedLock}); the binder
 *       goes on at once (its confirmation sees the new holder). Should it reach its Binding anyway
 *       (a confirmation that does not read the store), it is slow there: it waits for the release
 *       and then {@code pause}, so that other binders may take the free lock first.
 * </ul>
 *
 * Every removal is recorded ({@link RunReport#lockRemovals()}), every takeover with what its writer
 * saw at its release ({@link RunReport#skewedTakeovers()}).
 */
final class OtherWriter {
  private final ScenarioBackend backend;
  private final String key;
  private final Map<String, Scenario.PodSpec> specs;
  private final Duration pause;
  private final ThreadLocal<Scenario.PodSpec> binding = new ThreadLocal<>();
  private final Set<String> done = ConcurrentHashMap.newKeySet();
  private final List<RunReport.LockRemovalEvent> removals = new CopyOnWriteArrayList<>();
  private final Duration lockTimeout;
  private final Duration hold;
  private final Map<String, CompletableFuture<RunReport.SkewedTakeoverEvent>> takeovers =
      new ConcurrentHashMap<>();

  OtherWriter(
      ScenarioBackend backend,
      String key,
      Map<String, Scenario.PodSpec> specs,
      Duration pause,
      Duration lockTimeout,
      Duration hold) {
    this.backend = backend;
    this.key = key;
    this.specs = specs;
    this.pause = pause;
    this.lockTimeout = lockTimeout;
    this.hold = hold;
  }

  /** Runs {@code bind} on this thread as the bind of {@code spec}. */
  <T> T during(Scenario.PodSpec spec, Supplier<T> bind) {
    binding.set(spec);
    try {
      return bind.get();
    } finally {
      binding.remove();
    }
  }

  List<RunReport.LockRemovalEvent> removals() {
    return List.copyOf(removals);
  }

  /**
   * Waits for every skewed writer to release its lock.
   *
   * @param deadline {@link System#nanoTime()} bound
   * @return the takeovers, each with what its writer saw at its release
   * @throws Exception a release failed, or {@link TimeoutException} past the deadline
   */
  List<RunReport.SkewedTakeoverEvent> takeovers(long deadline) throws Exception {
    List<RunReport.SkewedTakeoverEvent> out = new ArrayList<>();
    for (CompletableFuture<RunReport.SkewedTakeoverEvent> f : takeovers.values()) {
      out.add(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
    }
    return out;
  }

  private void takeOver(Scenario.PodSpec spec, String node) {
    ScenarioBackend.LockTakeover t;
    try {
      t = backend.takeOverLockWithSkewedClock(node, key, lockTimeout, lockTimeout.plusSeconds(1));
    } catch (Exception e) {
      throw new IllegalStateException(
          "the skewed writer could not take over lock " + key + " on " + node + ": " + e, e);
    }
    removals.add(
        new RunReport.LockRemovalEvent(
            spec.name(), node, Scenario.LockRemoval.SKEWED_TAKEOVER, t.replaced()));
    Executor later =
        CompletableFuture.delayedExecutor(
            hold.toNanos(),
            TimeUnit.NANOSECONDS,
            r -> {
              Thread th = new Thread(r, "skewed-writer");
              th.setDaemon(true);
              th.start();
            });
    takeovers.put(
        spec.name(),
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new RunReport.SkewedTakeoverEvent(
                    spec.name(), t, backend.releaseSkewedLock(t));
              } catch (Exception e) {
                throw new IllegalStateException("the skewed writer could not release " + t, e);
              }
            },
            later));
  }

  private void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean due(Scenario.PodSpec spec, Scenario.LockRemoval moment) {
    return spec != null && spec.lockRemoval() == moment && done.add(spec.name());
  }

  private void remove(Scenario.PodSpec spec, String node, Scenario.LockRemoval moment) {
    Optional<String> removed;
    try {
      removed = backend.removeLockAsAnotherWriter(node, key);
    } catch (Exception e) {
      throw new IllegalStateException(
          "the other writer could not remove lock " + key + " on " + node + ": " + e, e);
    }
    removals.add(new RunReport.LockRemovalEvent(spec.name(), node, moment, removed));
  }

  /** {@code reader}, removing the lock after a binder's usage read when due. */
  ClusterReader reader(ClusterReader reader) {
    return PortHooks.reader(
        reader,
        p -> p,
        node -> {
          Scenario.PodSpec spec = binding.get();
          if (due(spec, Scenario.LockRemoval.BEFORE_CONFIRMATION)) {
            remove(spec, node, Scenario.LockRemoval.BEFORE_CONFIRMATION);
            sleep(pause);
          } else if (due(spec, Scenario.LockRemoval.SKEWED_TAKEOVER)) {
            takeOver(spec, node);
          }
        });
  }

  /** The backend's writer, removing the lock right before a Binding when due. */
  ClusterWriter writer() {
    return PortHooks.writer(
        backend.writer(),
        (name, node) -> {
          Scenario.PodSpec spec = specs.get(name);
          if (due(spec, Scenario.LockRemoval.AFTER_CONFIRMATION)) {
            remove(spec, node, Scenario.LockRemoval.AFTER_CONFIRMATION);
          }
          CompletableFuture<?> takeover = spec == null ? null : takeovers.get(spec.name());
          if (takeover != null) { // bound on a lost lock: slow, so that others take it first
            try {
              takeover.get(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } catch (Exception e) {
              // reported by takeovers(deadline)
            }
            sleep(pause);
          }
        });
  }
}
