package dev.hamilock.bind.testing;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 23, fault 1, as one interleaving over any {@link ScenarioBackend}: a lock removed by
 * another writer while its binder is between acquiring it and its Binding.
 *
 * <p>One T4 (15360 MiB); pods {@code a} and {@code b} ask one card with 10000 MiB and 10 % each,
 * each bound by its own scheduler process ({@link PodBinder} with its own locks, re-fit under the
 * lock on). {@code a}'s binder acquires the node lock and reads the node's usage; right then
 * another writer removes the lock ({@link ScenarioBackend#removeLockAsAnotherWriter}); {@code b}'s
 * binder, on another thread, acquires the free lock, finds the card free ({@code a}'s allocation is
 * not written yet), writes its allocation and POSTs its Binding, keeping its lock for the device
 * plugin. Then {@code a}'s binder writes its allocation, confirms its lock and would POST its
 * Binding: two pods with 20000 MiB on one 15360 MiB card. Expected: {@code a} ends {@code
 * CONTENDED}, its allocation annotations cleared, no Binding; {@code b} bound; {@code b}'s lock
 * value untouched.
 */
public final class LockRemovedBeforeBinding {
  /** Memory each pod asks, MiB: two of them exceed the card. */
  public static final int POD_MEMORY_MIB = 10_000;

  /** The card's memory, MiB (T4). */
  public static final int CARD_MEMORY_MIB = 15_360;

  private LockRemovedBeforeBinding() {}

  /**
   * What happened.
   *
   * @param removed the lock value the other writer removed (empty: {@code a} held no lock then)
   * @param a pod {@code a}'s bind
   * @param b pod {@code b}'s bind (during {@code a}'s)
   * @param lockAfterB the node's lock value right after {@code b}'s bind
   * @param bindings the Binding POSTs sent, as {@code pod->node}, in order
   * @param lockAtEnd the node's lock value at the end
   * @param podA pod {@code a} as stored at the end
   * @param podB pod {@code b} as stored at the end
   */
  public record Outcome(
      Optional<String> removed,
      BindResult a,
      BindResult b,
      Optional<String> lockAfterB,
      List<String> bindings,
      Optional<String> lockAtEnd,
      ClusterPod podA,
      ClusterPod podB) {

    /**
     * @return every expectation of the class description that this outcome misses (empty: the lost
     *     lock was noticed before the Binding and nothing was over-committed)
     */
    public List<String> unmet() {
      List<String> out = new ArrayList<>();
      if (removed.flatMap(LockRemovedBeforeBinding::ownerName).filter("a"::equals).isEmpty()) {
        out.add("the other writer removed " + removed + ", not pod a's lock");
      }
      if (b.outcome() != BindOutcome.BOUND || !podB.isBound() || !hasAllocation(podB)) {
        out.add("pod b not bound with its allocation: " + b.outcome() + " " + b.reason());
      }
      if (a.outcome() != BindOutcome.CONTENDED || a.locksHeld()) {
        out.add(
            "pod a's bind ended "
                + a.outcome()
                + " (locks held "
                + a.locksHeld()
                + "), not CONTENDED");
      }
      if (podA.isBound() || hasAllocation(podA)) {
        out.add("pod a bound or still carrying an allocation: " + podA);
      }
      if (!bindings.equals(List.of("b->" + podB.nodeName().orElse("?")))) {
        out.add("Binding POSTs " + bindings + ": only pod b's expected");
      }
      if (lockAfterB.flatMap(LockRemovedBeforeBinding::ownerName).filter("b"::equals).isEmpty()
          || !lockAtEnd.equals(lockAfterB)) {
        out.add("pod b's lock " + lockAfterB + " not left untouched: " + lockAtEnd);
      }
      return out;
    }
  }

  private static Optional<String> ownerName(String lockValue) {
    try {
      return LockRecordCodec.parse(lockValue).owner().map(LockOwner::name);
    } catch (MalformedLockException e) {
      return Optional.empty();
    }
  }

  /**
   * Runs the interleaving.
   *
   * @param backend a fresh backend that can remove a lock as another writer
   * @param registry the vendors (NVIDIA needed)
   * @param node a node name no other run uses
   * @throws Exception if the backend failed or {@code b}'s bind did not finish within 60 s
   */
  public static Outcome run(ScenarioBackend backend, VendorRegistry registry, String node)
      throws Exception {
    Objects.requireNonNull(backend, "backend");
    String key =
        registry.vendor("NVIDIA").orElseThrow().nodeLockKey().orElse(HamiAnnotations.MUTEX_LOCK);
    backend.createNode(
        new Scenario.NodeSpec(
                node,
                List.of(
                    new Scenario.GpuSpec("GPU-" + node + "-0", CARD_MEMORY_MIB, "NVIDIA-Tesla T4")))
            .toNodeView());
    PodView a = backend.createPod(pod("a"));
    PodView b = backend.createPod(pod("b"));
    List<String> bindings = new CopyOnWriteArrayList<>();
    AtomicReference<Optional<String>> removed = new AtomicReference<>();
    AtomicReference<BindResult> bResult = new AtomicReference<>();
    AtomicReference<Optional<String>> lockAfterB = new AtomicReference<>();
    ExecutorService otherScheduler = Executors.newSingleThreadExecutor();
    try {
      Runnable interleave =
          () -> {
            try {
              removed.set(backend.removeLockAsAnotherWriter(node, key));
              bResult.set(
                  otherScheduler
                      .submit(
                          () ->
                              binder(backend, backend.reader(), bindings, registry)
                                  .bind(b.namespace(), b.name(), "", node))
                      .get(60, TimeUnit.SECONDS));
              lockAfterB.set(lock(backend, node, key));
            } catch (Exception e) {
              throw new IllegalStateException("the other writer and pod b's bind failed", e);
            }
          };
      BindResult aResult =
          binder(backend, afterUsageRead(backend.reader(), node, interleave), bindings, registry)
              .bind(a.namespace(), a.name(), "", node);
      return new Outcome(
          Objects.requireNonNull(removed.get(), "the interleaving did not run"),
          aResult,
          bResult.get(),
          lockAfterB.get(),
          List.copyOf(bindings),
          lock(backend, node, key),
          stored(backend, "a"),
          stored(backend, "b"));
    } finally {
      otherScheduler.shutdownNow();
    }
  }

  private static PodView pod(String name) {
    return new Scenario.PodSpec(
            name, 1, POD_MEMORY_MIB, 0, 10, 0, 0, false, Scenario.BindingFault.NONE)
        .toPodView("lost-lock-" + name);
  }

  private static PodBinder binder(
      ScenarioBackend backend,
      ClusterReader reader,
      List<String> bindings,
      VendorRegistry registry) {
    return PodBinder.builder(
            reader,
            PortHooks.writer(backend.writer(), (name, n) -> bindings.add(name + "->" + n)),
            registry,
            backend.locks())
        .build();
  }

  /** {@code reader}; the first listing of the pods on {@code node} is followed by {@code then}. */
  private static ClusterReader afterUsageRead(ClusterReader reader, String node, Runnable then) {
    AtomicBoolean done = new AtomicBoolean();
    return PortHooks.reader(
        reader,
        p -> p,
        n -> {
          if (n.equals(node) && done.compareAndSet(false, true)) {
            then.run();
          }
        });
  }

  private static Optional<String> lock(ScenarioBackend backend, String node, String key)
      throws Exception {
    return backend.nodes().stream()
        .filter(n -> n.name().equals(node))
        .findFirst()
        .map(n -> n.annotations().get(key));
  }

  private static ClusterPod stored(ScenarioBackend backend, String name) throws Exception {
    return backend.pods().stream()
        .filter(p -> p.view().name().equals(name))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("pod " + name + " is gone"));
  }

  /**
   * @return whether it carries HAMi's NVIDIA allocation annotations
   */
  public static boolean hasAllocation(ClusterPod pod) {
    return pod.view().annotations().containsKey(BindInvariants.ALLOCATED)
        || pod.view().annotations().containsKey(BindInvariants.TO_ALLOCATE);
  }
}
