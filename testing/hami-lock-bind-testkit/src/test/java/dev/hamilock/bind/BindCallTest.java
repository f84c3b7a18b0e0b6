package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link BindCall}: the call-local recorder of one bind, and the result it reports. */
class BindCallTest {
  /** A clock one second further at every reading. */
  static InstantSource ticking() {
    long[] t = {0};
    return () -> Instant.EPOCH.plusSeconds(t[0]++);
  }

  @Test
  void eachPhaseIsTimedFromItsStartToItsEndAndTheTotalFromTheCallsStart() {
    BindCall c = new BindCall(NS, "p1", "", "gpu-1", ticking()); // start = 0 s
    c.took(Phase.LOCK_WAIT, c.now()); // 1 s .. 2 s
    c.took(Phase.BINDING, Instant.EPOCH); // 0 s .. 3 s

    BindTimings t = c.bound(Optional.empty()).timings();

    assertThat(t.lockWait()).isEqualTo(Duration.ofSeconds(1));
    assertThat(t.binding()).isEqualTo(Duration.ofSeconds(3));
    assertThat(List.of(t.refit(), t.annotate(), t.cleanup())).containsOnly(Duration.ZERO);
    assertThat(t.total()).isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void aStoppedCallReportsTheStopsVerdictReasonAndWhatItStillHolds() throws Exception {
    BindCall c = new BindCall(NS, "p1", "", "gpu-1", ticking());
    BindResult early =
        c.stopped(new Stop(BindOutcome.POD_NOT_FOUND, "gone", null), Optional.empty());
    assertThat(early.lockKeys()).as("no subject yet").isEmpty();

    PodView p = pod("p1", 1, 1000, 10);
    c.subject(Subject.of(p, PodFitter.create(REGISTRY).requests(p), REGISTRY));
    c.held = List.of(Fixtures.lock(dev.hamilock.bind.memory.InMemoryCluster.create(), "k"));
    c.problems.add("cannot release");
    BindResult r =
        c.stopped(new Stop(BindOutcome.CONTENDED, "lost the lock", null), Optional.of("gpu-2"));

    assertThat(r.outcome()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(r.reason()).isEqualTo("lost the lock");
    assertThat(r.failure().orElseThrow().kind()).isEqualTo(FlowFailure.Kind.CONTENTION);
    assertThat(r.boundNode()).contains("gpu-2");
    assertThat(r.lockKeys()).containsExactly(NodeLock.DEFAULT_KEY);
    assertThat(r.locksHeld()).isTrue();
    assertThat(r.cleanupProblems()).containsExactly("cannot release");
  }

  @Test
  void aStopsFailureKindFollowsItsVerdict() {
    assertThat(new Stop(BindOutcome.TIMED_OUT, "x", null).failure().kind())
        .isEqualTo(FlowFailure.Kind.CONTENTION);
    assertThat(new Stop(BindOutcome.DOES_NOT_FIT, "x", null).failure().kind())
        .isEqualTo(FlowFailure.Kind.DOES_NOT_FIT);
    assertThat(new Stop(BindOutcome.INVALID_POD, "x", null).failure().kind())
        .isEqualTo(FlowFailure.Kind.INVALID_REQUEST);
    assertThat(new Stop(BindOutcome.NODE_NOT_FOUND, "x", null).failure().kind())
        .isEqualTo(FlowFailure.Kind.NOT_FOUND);
    assertThat(new Stop(BindOutcome.UNKNOWN, "x", null).failure().kind())
        .isEqualTo(FlowFailure.Kind.UNAVAILABLE);
    assertThat(new Stop(BindOutcome.FAILED, "x", null).failure().kind())
        .isEqualTo(FlowFailure.Kind.REJECTED);
  }

  @Test
  void theSubjectNamesTheRequestedVendorsAndTheirLockKeysAndADevicelessPodNeedsNothing()
      throws Exception {
    PodFitter fitter = PodFitter.create(REGISTRY);
    PodView gpu = pod("p1", 1, 1000, 10);
    Subject s = Subject.of(gpu, fitter.requests(gpu), REGISTRY);
    assertThat(s.vendors()).containsExactly("NVIDIA");
    assertThat(s.keys()).containsExactly(NodeLock.DEFAULT_KEY);
    assertThat(s.needsNothing()).isFalse();

    PodView plain = PodView.builder(NS, "plain").containers(List.of()).build();
    Subject none = Subject.of(plain, fitter.requests(plain), REGISTRY);
    assertThat(none.vendors()).isEmpty();
    assertThat(none.needsNothing()).isTrue();
  }
}
