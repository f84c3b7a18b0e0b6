package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A user's {@link NodeLockProvider} (a lambda over their own locks) is a port: one that throws an
 * unchecked exception other than the documented {@code IllegalArgumentException}, or answers null,
 * ends the bind FAILED before any lock, nothing written; on 5adf109 both escaped {@code bind}.
 */
class UncheckedLockProviderTest {

  @Test
  void aProvidersUncheckedExceptionOrNullEndsTheBindFailedWithNothingWritten() {
    List<NodeLockProvider> broken =
        List.of(
            key -> {
              throw new IllegalStateException("injected provider bug");
            },
            key -> null);
    for (NodeLockProvider provider : broken) {
      InMemoryCluster cluster = InMemoryCluster.create();
      cluster.addNode(node("n1", 2, 15360));
      PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
      Fixtures.filteredOnto(cluster, p1, "n1");
      BindResult r =
          PodBinder.builder(cluster, cluster, Fixtures.REGISTRY, provider)
              .clock(Fixtures.CLOCK)
              .build()
              .bind(NS, "p1", p1.uid(), "n1");
      assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
      assertThat(r.reason()).contains("no node lock");
      assertThat(r.failure()).isPresent();
      assertThat(lockValue(cluster, "n1")).isNull();
      assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
    }
  }
}
