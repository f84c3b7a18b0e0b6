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
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
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

  private static final Set<Operation> BIND_OPS =
      EnumSet.of(
          Operation.READ_NODE,
          Operation.READ_POD,
          Operation.LIST_ASSIGNED,
          Operation.PATCH_POD,
          Operation.BIND,
          Operation.LOCK_READ,
          Operation.LOCK_WRITE);

  /** Throws at the {@code n}-th call of {@code op}, after the Binding fault if any. */
  private static final class Injector implements InMemoryCluster.FaultInjector {
    final Operation op;
    final int n;
    final Fault binding;
    final AtomicInteger calls = new AtomicInteger();
    volatile boolean thrown;

    Injector(Operation op, int n, Fault binding) {
      this.op = op;
      this.n = n;
      this.binding = binding;
    }

    @Override
    public Fault inject(Operation o, String target) {
      if (o == op && calls.incrementAndGet() == n) {
        thrown = true;
        throw new IllegalStateException("injected port bug at call " + n + " of " + op);
      }
      return o == Operation.BIND ? binding : Fault.NONE;
    }
  }

  @Test
  void aPortsUncheckedExceptionAtAnyCallOfABindIsATypedAnswerThatLeavesNothingBehind() {
    List<String> wrong = new ArrayList<>();
    Set<Operation> hit = EnumSet.noneOf(Operation.class);
    try (LogCapture log = LogCapture.start()) {
      for (Fault binding : List.of(Fault.NONE, Fault.FAIL_BEFORE, Fault.FAIL_AFTER)) {
        for (Operation op : BIND_OPS) {
          for (int n = 1; n <= MAX_CALL; n++) {
            Injector inj = new Injector(op, n, binding);
            String run = "Binding %s, call %d of %s".formatted(binding, n, op);
            bindOnce(inj, run).ifPresent(wrong::add);
            if (inj.thrown) {
              hit.add(op);
            }
          }
        }
      }
      log.expect("WARN dev\\.hamilock\\.");
    }
    assertThat(hit).as("the operations a bind reached and threw at").isEqualTo(BIND_OPS);
    assertThat(wrong).isEmpty();
  }

  /** One bind of a filtered pod; what is wrong with its end, if anything. */
  private static Optional<String> bindOnce(Injector inj, String run) {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    cluster.faults(inj);
    BindResult r;
    try {
      r = Fixtures.binder(cluster).build().bind(NS, "p1", p1.uid(), "n1");
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

  private static final Set<Operation> HANDOFF_OPS =
      EnumSet.of(
          Operation.READ_POD, // not LIST_ON_NODE: the fallback when the lock names no pod
          Operation.PATCH_POD,
          Operation.LOCK_READ,
          Operation.LOCK_WRITE);

  @Test
  void aPortsUncheckedExceptionAtAnyCallOfAHandoffIsATypedAnswerThatLosesNothing() {
    List<String> wrong = new ArrayList<>();
    Set<Operation> hit = EnumSet.noneOf(Operation.class);
    try (LogCapture log = LogCapture.start()) {
      for (Operation op : HANDOFF_OPS) {
        for (int n = 1; n <= MAX_CALL; n++) {
          Injector inj = new Injector(op, n, Fault.NONE);
          handoffOnce(inj, "call %d of %s".formatted(n, op)).ifPresent(wrong::add);
          if (inj.thrown) {
            hit.add(op);
          }
        }
      }
      log.expect("WARN dev\\.hamilock\\.");
    }
    assertThat(hit).as("the operations a hand-off reached and threw at").isEqualTo(HANDOFF_OPS);
    assertThat(wrong).isEmpty();
  }

  /**
   * One Allocate of a bound pod; what is wrong with its end, if anything. Served or failed: the
   * bind phase says so and the lock is gone unless the result says it was not released. Nothing
   * served (ERROR and the like): nothing written or released, and a repeat serves the pod.
   */
  private static Optional<String> handoffOnce(Injector inj, String run) {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    BindResult bound = Fixtures.binder(cluster).build().bind(NS, "p1", p1.uid(), "n1");
    assertThat(bound.outcome()).as(bound.reason()).isEqualTo(BindOutcome.BOUND);
    cluster.faults(inj);
    HandoffResult r;
    try {
      r = Fixtures.handoff(cluster).allocateAll("n1");
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
}
