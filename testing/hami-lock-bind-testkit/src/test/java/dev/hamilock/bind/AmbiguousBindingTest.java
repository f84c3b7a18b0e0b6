package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link AmbiguousBinding}: after a Binding answered with an unknown outcome (HAMi#2645), the pod
 * re-read tells whether it went through.
 */
class AmbiguousBindingTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final AtomicInteger reads = new AtomicInteger();
  final BindingPostResult timedOut = BindingPostResult.ambiguous("binding timed out");

  @AfterEach
  void clearFlag() {
    Thread.interrupted();
  }

  /** Re-reads from the cluster, refusing an interrupted thread's, or failing every time. */
  ClusterReader reader(boolean unreadable) {
    return new ClusterReader() {
      @Override
      public Optional<NodeView> readNode(String name) throws ClusterException {
        return cluster.readNode(name);
      }

      @Override
      public Optional<ClusterPod> readPod(String ns, String name) throws ClusterException {
        reads.incrementAndGet();
        if (unreadable || Thread.currentThread().isInterrupted()) {
          throw new ClusterException(ClusterException.Kind.UNAVAILABLE, "read " + reads, null);
        }
        return cluster.readPod(ns, name);
      }

      @Override
      public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
        return cluster.listPodsAssignedTo(node);
      }

      @Override
      public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
        return cluster.listPodsOnNode(node);
      }

      @Override
      public DraObjects readDra(Collection<String> nodes) {
        return cluster.readDra(nodes);
      }
    };
  }

  BindResult resolve(boolean unreadable, Optional<String> boundTo) throws Exception {
    PodView p = cluster.addPod(pod("p1", 1, 1000, 0), boundTo).view();
    BindCall c = new BindCall(NS, "p1", "", "gpu-1", BindCallTest.ticking());
    c.subject(Subject.of(p, PodFitter.create(REGISTRY).requests(p), REGISTRY));
    Cleanup cleanup =
        new Cleanup(
            cluster,
            cluster,
            REGISTRY,
            new BindLocks(locks(cluster), NodeLockAcquirer.create(RetryPolicy.defaults())));
    return new AmbiguousBinding(reader(unreadable), cleanup, 3).resolve(c, c.now(), timedOut);
  }

  @Test
  void aBindingThatWentThroughIsBound() throws Exception {
    BindResult r = resolve(false, Optional.of("gpu-1"));

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(reads).hasValue(1);
  }

  @Test
  void aBindingThatDidNotGoThroughFailsAndIsCleanedUp() throws Exception {
    BindResult r = resolve(false, Optional.empty());

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason())
        .isEqualTo("binding pod default/p1 to gpu-1 was not applied: binding timed out");
  }

  @Test
  void aPodBoundElsewhereIsAlreadyBoundThere() throws Exception {
    BindResult r = resolve(false, Optional.of("gpu-2"));

    assertThat(r.outcome()).isEqualTo(BindOutcome.ALREADY_BOUND);
    assertThat(r.boundNode()).contains("gpu-2");
  }

  @Test
  void aPodNeverReadableIsUnknownAfterEveryRereadWithTheLastReadsCause() throws Exception {
    BindResult r;
    try (LogCapture log = LogCapture.start()) {
      r = resolve(true, Optional.empty());
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - binding pod default/p1 .*"))
          .singleElement(as(InstanceOfAssertFactories.STRING))
          .contains(
              "has an unknown outcome (binding timed out)",
              "read 3",
              "leaving its locks and allocation annotations in place");
    }

    assertThat(r.outcome()).isEqualTo(BindOutcome.UNKNOWN);
    assertThat(reads).hasValue(3);
    assertThat(r.failure().orElseThrow().kind()).isEqualTo(FlowFailure.Kind.UNAVAILABLE);
    assertThat(r.cause().orElseThrow()).hasMessage("read 3");
    assertThat(r.timings().binding()).as("from the POST to the last re-read").hasSeconds(3);
  }

  @Test
  void theRereadsOfAnInterruptedBindRunUninterruptedAndTheFlagIsRestored() throws Exception {
    Thread.currentThread().interrupt();

    BindResult r = resolve(false, Optional.of("gpu-1"));

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(Thread.currentThread().isInterrupted()).isTrue();
  }
}
