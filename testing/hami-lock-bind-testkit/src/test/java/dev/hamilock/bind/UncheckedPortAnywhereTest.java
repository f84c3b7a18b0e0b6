package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * The kind behind {@code UncheckedUsageReadTest} and {@code UncheckedHandoffPortTest}: a port's
 * unchecked exception (a client's bug, an answer it does not map) at <em>any</em> call of a bind or
 * a hand-off, not only at the calls those tests picked. Every combination is run: the Binding POST
 * answered, unknown unapplied or unknown applied (which sends the bind into its re-reads), times
 * each port operation of the in-memory cluster (reads, LISTs, PATCHes, the Binding, the lock
 * store's reads and writes), times the n-th call of it throwing. Whatever throws where, the call
 * returns a typed answer, and a bind that did not bind leaves no lock and no bind phase behind
 * unless its result reports the clean-up's own failure (a lock then expires), and except UNKNOWN,
 * whose locks stay by design until the outcome is known or they expire.
 */
class UncheckedPortAnywhereTest {
  private static final String PHASE = "hami.io/bind-phase";

  /** Enough for every call of every operation in one bind and one hand-off here (at most 4). */
  private static final int MAX_CALL = 6;

  /** The cluster's operations (their names) and a user NodeLock's methods ({@link Lock}). */
  private static final Set<String> BIND_OPS =
      Set.of(
          "READ_NODE",
          "READ_POD",
          "LIST_ASSIGNED",
          "PATCH_POD",
          "BIND",
          "LOCK_READ",
          "LOCK_WRITE",
          "acquire",
          "release",
          "stillHeld");

  /** Throws at the {@code n}-th call of {@code op}, after the Binding fault if any. */
  private static final class Injector implements InMemoryCluster.FaultInjector {
    final String op;
    final int n;
    final Fault binding;
    final AtomicInteger calls = new AtomicInteger();
    volatile boolean thrown;

    Injector(String op, int n, Fault binding) {
      this.op = op;
      this.n = n;
      this.binding = binding;
    }

    void at(String o) {
      if (o.equals(op) && calls.incrementAndGet() == n) {
        thrown = true;
        throw new IllegalStateException("injected port bug at call " + n + " of " + op);
      }
    }

    @Override
    public Fault inject(Operation o, String target) {
      at(o.name());
      return o == Operation.BIND ? binding : Fault.NONE;
    }
  }

  /**
   * A user's own NodeLock (not {@link dev.hamilock.core.store.StoreNodeLock}, so the flows take
   * their generic paths) over the cluster's lock, each call first passing the injector.
   */
  private record Lock(NodeLock lock, Injector inj) implements NodeLock {
    @Override
    public String key() {
      return lock.key();
    }

    @Override
    public Duration lockTimeout() {
      return lock.lockTimeout();
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner)
        throws LockContentionException, LockBackendException {
      inj.at("acquire");
      return lock.acquire(node, owner);
    }

    @Override
    public boolean release(String node, LockOwner owner) throws LockBackendException {
      inj.at("release");
      return lock.release(node, owner);
    }

    @Override
    public boolean stillHeld(String node, LockOwner owner) throws LockBackendException {
      inj.at("stillHeld");
      return lock.stillHeld(node, owner);
    }

    @Override
    public Optional<LockRecord> read(String node)
        throws MalformedLockException, LockBackendException {
      inj.at("read");
      return lock.read(node);
    }
  }

  private static NodeLockProvider locks(InMemoryCluster cluster, Injector inj) {
    return NodeLockProvider.cached(key -> new Lock(Fixtures.lock(cluster, key), inj));
  }

  @Test
  void aPortsUncheckedExceptionAtAnyCallOfABindIsATypedAnswerThatLeavesNothingBehind() {
    everyCall(
        BIND_OPS,
        List.of(Fault.NONE, Fault.FAIL_BEFORE, Fault.FAIL_AFTER),
        "a bind",
        this::bindOnce);
  }

  /**
   * Runs {@code once} with each (Binding fault, operation, call) thrown at; asserts every operation
   * was reached and no run went wrong.
   */
  private static void everyCall(
      Set<String> ops,
      List<Fault> bindingFaults,
      String what,
      BiFunction<Injector, String, Optional<String>> once) {
    List<String> wrong = new ArrayList<>();
    Set<String> hit = new TreeSet<>();
    try (LogCapture log = LogCapture.start()) {
      for (Fault binding : bindingFaults) {
        for (String op : ops) {
          for (int n = 1; n <= MAX_CALL; n++) {
            Injector inj = new Injector(op, n, binding);
            String run = "Binding %s, call %d of %s".formatted(binding, n, op);
            once.apply(inj, run).ifPresent(wrong::add);
            if (inj.thrown) {
              hit.add(op);
            }
          }
        }
      }
      log.expect("WARN dev\\.hamilock\\.");
    }
    assertThat(hit)
        .as("the operations %s reached and threw at", what)
        .isEqualTo(new TreeSet<>(ops));
    assertThat(wrong).isEmpty();
  }

  /** One bind of a filtered pod; what is wrong with its end, if anything. */
  private Optional<String> bindOnce(Injector inj, String run) {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    cluster.faults(inj);
    BindResult r;
    try {
      r =
          PodBinder.builder(cluster, cluster, Fixtures.REGISTRY, locks(cluster, inj))
              .clock(Fixtures.CLOCK)
              .retryPolicy(Fixtures.RETRY)
              .build()
              .bind(NS, "p1", p1.uid(), "n1");
    } catch (RuntimeException e) {
      return Optional.of(run + ": the bind threw " + e + ", the lock " + lockValue(cluster, "n1"));
    } finally {
      cluster.faults(InMemoryCluster.FaultInjector.NONE);
    }
    Map<String, String> left = annotations(cluster, "p1");
    boolean bound = cluster.pods().get(0).nodeName().isPresent();
    String lock = lockValue(cluster, "n1");
    boolean reported = r.locksHeld() && !r.cleanupProblems().isEmpty(); // the release itself failed
    return switch (r.outcome()) {
      case BOUND -> bound ? Optional.empty() : Optional.of(run + ": BOUND but not bound");
      case UNKNOWN -> Optional.empty();
      default ->
          bound || (lock != null && !reported) || (left.containsKey(PHASE) && !reported)
              ? Optional.of(
                  "%s: %s (%s) left bound=%s, the lock %s, bind phase %s, problems %s"
                      .formatted(
                          run,
                          r.outcome(),
                          r.reason(),
                          bound,
                          lock,
                          left.get(PHASE),
                          r.cleanupProblems()))
              : Optional.empty();
    };
  }

  private static final Set<String> HANDOFF_OPS =
      Set.of(
          "READ_POD", // not LIST_ON_NODE: the fallback when the lock names no pod
          "PATCH_POD",
          "LOCK_READ",
          "LOCK_WRITE",
          "read",
          "release");

  @Test
  void aPortsUncheckedExceptionAtAnyCallOfAHandoffIsATypedAnswerThatLosesNothing() {
    everyCall(HANDOFF_OPS, List.of(Fault.NONE), "a hand-off", this::handoffOnce);
  }

  /**
   * One Allocate of a bound pod; what is wrong with its end, if anything. Served or failed: the
   * bind phase says so and the lock is gone unless the result says it was not released. Nothing
   * served (ERROR and the like): nothing written or released, and a repeat serves the pod.
   */
  private Optional<String> handoffOnce(Injector inj, String run) {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    BindResult bound = Fixtures.binder(cluster).build().bind(NS, "p1", p1.uid(), "n1");
    assertThat(bound.outcome()).as(bound.reason()).isEqualTo(BindOutcome.BOUND);
    cluster.faults(inj);
    HandoffResult r;
    try {
      r =
          DevicePluginHandoff.create(
                  cluster,
                  cluster,
                  Fixtures.REGISTRY.vendor("NVIDIA").orElseThrow(),
                  new Lock(Fixtures.lock(cluster, Fixtures.LOCK_KEY), inj))
              .allocateAll("n1");
    } catch (RuntimeException e) {
      return Optional.of(run + ": Allocate threw " + e + ", the lock " + lockValue(cluster, "n1"));
    } finally {
      cluster.faults(InMemoryCluster.FaultInjector.NONE);
    }
    String phase = annotations(cluster, "p1").get(PHASE);
    boolean locked = lockValue(cluster, "n1") != null;
    String end =
        "%s: %s (%s), bind phase %s, locked %s".formatted(run, r, r.reason(), phase, locked);
    return switch (r.status()) {
      case COMPLETED, FAILED -> {
        String want = r.status() == HandoffResult.Status.COMPLETED ? "success" : "failed";
        yield want.equals(phase) && locked != r.lockReleased()
            ? Optional.empty()
            : Optional.of(end);
      }
      case PARTIAL -> Optional.of(end + ": one container, nothing left to serve later");
      default -> {
        if (!"allocating".equals(phase) || !locked) {
          yield Optional.of(end + ": nothing served, yet something was written or released");
        }
        HandoffResult again = Fixtures.handoff(cluster).allocateAll("n1");
        yield again.status() == HandoffResult.Status.COMPLETED
            ? Optional.empty()
            : Optional.of(end + "; the repeat: " + again);
      }
    };
  }

  @Test
  void aPortsUncheckedExceptionAtAnyCallOfAFilterIsAFailedDecision() {
    everyCall(
        Set.of("READ_NODE", "LIST_ASSIGNED", "READ_POD", "PATCH_POD"),
        List.of(Fault.NONE),
        "a Filter",
        this::filterOnce);
  }

  /** One Filter writing HAMi's annotations; a decision choosing no node must say why. */
  private Optional<String> filterOnce(Injector inj, String run) {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    cluster.faults(inj);
    FilterDecision d;
    try {
      d =
          ExtenderFilter.builder(cluster, Fixtures.REGISTRY)
              .writeAnnotations(cluster)
              .build()
              .filter(p1, List.of("n1"));
    } catch (RuntimeException e) {
      return Optional.of(run + ": the Filter threw " + e);
    } finally {
      cluster.faults(InMemoryCluster.FaultInjector.NONE);
    }
    boolean written = annotations(cluster, "p1").containsKey("hami.io/vgpu-node");
    return d.node().isPresent() == written && (d.node().isPresent() || d.failure().isPresent())
        ? Optional.empty()
        : Optional.of(run + ": " + d + ", annotations written " + written);
  }
}
