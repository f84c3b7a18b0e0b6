package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.RETRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The kind behind a review's finding of 2026-12-04 (an unchecked exception of the lock store's read
 * escaped the bind with the node locked), widened from the confirmation to every port call under
 * the lock: a {@code ClusterReader} that throws unchecked there (a user's port with a bug, an
 * unparsable answer) ends the bind FAILED with the exception named, the lock released and no
 * allocation left on the unbound pod, in the blocking flow and in {@code bindAsync} (whose pod is
 * written first: its allocation must be cleared too). Before, the exception escaped the bind and
 * the node stayed locked for the lock timeout.
 */
class UncheckedPortFailureUnderTheLockTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final ExecutorService pool = Executors.newCachedThreadPool();
  final AtomicInteger lists = new AtomicInteger();

  /** The cluster, its pod LISTs throwing unchecked (counted in {@link #lists}). */
  final ForwardingCluster garbledLists =
      new ForwardingCluster(cluster, cluster) {
        @Override
        public List<ClusterPod> listPodsAssignedTo(String node) {
          lists.incrementAndGet();
          throw new IllegalStateException("unparsable pod list (an HTML error page)");
        }
      };

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  @ParameterizedTest(name = "bindAsync: {0}")
  @ValueSource(booleans = {false, true})
  void anUncheckedFailureOfAUsageReadEndsTheBindFailedAndReleased(boolean async) throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    PodBinder binder =
        PodBinder.builder(garbledLists, garbledLists, REGISTRY, Fixtures.locks(cluster))
            .clock(CLOCK)
            .retryPolicy(RETRY)
            .build();

    BindResult r =
        async
            ? binder.bindAsync(NS, "p1", p1.uid(), "n1", pool).get(10, TimeUnit.SECONDS)
            : binder.bind(NS, "p1", p1.uid(), "n1");

    assertThat(lists).as("the usage read under the lock was made").hasPositiveValue();
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("unparsable pod list");
    assertThat(lockValue(cluster, "n1")).as("the node lock after the bind").isNull();
    assertThat(cluster.readPod(NS, "p1").orElseThrow().nodeName()).as("no Binding").isEmpty();
    assertThat(annotations(cluster, "p1"))
        .as("no bind phase or bind time left on the unbound pod")
        .doesNotContainKeys("hami.io/bind-phase", "hami.io/bind-time");
  }
}
