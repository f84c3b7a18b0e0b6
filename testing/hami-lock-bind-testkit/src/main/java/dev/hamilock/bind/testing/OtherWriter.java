package dev.hamilock.bind.testing;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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
 *       its last confirmation.
 * </ul>
 *
 * Every removal is recorded ({@link RunReport#lockRemovals()}).
 */
final class OtherWriter {
  private final ScenarioBackend backend;
  private final String key;
  private final Map<String, Scenario.PodSpec> specs;
  private final Duration pause;
  private final ThreadLocal<Scenario.PodSpec> binding = new ThreadLocal<>();
  private final Set<String> done = ConcurrentHashMap.newKeySet();
  private final List<RunReport.LockRemovalEvent> removals = new CopyOnWriteArrayList<>();

  OtherWriter(
      ScenarioBackend backend, String key, Map<String, Scenario.PodSpec> specs, Duration pause) {
    this.backend = backend;
    this.key = key;
    this.specs = specs;
    this.pause = pause;
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
            try {
              Thread.sleep(pause.toMillis(), pause.toNanosPart() % 1_000_000);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
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
        });
  }
}
