package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Breaker (held): the write-first bind's pod LIST at its write's version failing with anything but
 * UNAVAILABLE (a 403, a 400) is no proof of anything: the bind ends FAILED, no consistent list
 * tried in its place, and the clean-up removes the allocation written first and releases the lock.
 */
class VersionedListRejectedTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void aRejectedListAtTheVersionFailsTheBindCleanedUp() {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    AtomicInteger atVersion = new AtomicInteger();
    AtomicInteger consistent = new AtomicInteger();
    ForwardingCluster reader =
        new ForwardingCluster(cluster, cluster) {
          @Override
          public List<ClusterPod> listPodsAssignedTo(String node, Executor e, String version)
              throws ClusterException {
            atVersion.incrementAndGet();
            throw new ClusterException(ClusterException.Kind.REJECTED, "forbidden", null);
          }

          @Override
          public List<ClusterPod> listPodsAssignedTo(String node, Executor e)
              throws ClusterException {
            consistent.incrementAndGet();
            return super.listPodsAssignedTo(node, e);
          }
        };

    BindResult r =
        PodBinder.builder(reader, reader, REGISTRY, locks(cluster))
            .clock(Fixtures.CLOCK)
            .retryPolicy(Fixtures.RETRY)
            .build()
            .bind(NS, "p1", p1.uid(), "n1");

    assertThat(atVersion).hasValue(1);
    assertThat(consistent).hasValue(0);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1"))
        .doesNotContainKeys("hami.io/bind-phase", "hami.io/bind-time");
  }
}
