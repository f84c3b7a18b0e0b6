package dev.hamilock.bind.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.ResourceClaimView;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 28: {@link ClusterReader#readDra} had a default answering {@link DraObjects#NONE}, so a
 * port that forgot DRA — a user's, or a wrapper such as {@link PortHooks} that delegates every
 * other read — counted no DRA usage, silently. It has no default now: every port says what it does.
 */
class Issue28PortsForgetNoDraTest {

  @Test
  void aPortThatForgetsDraNoLongerCompilesInsteadOfCountingNoDraUsage() throws Exception {
    Method readDra = ClusterReader.class.getMethod("readDra", Collection.class);
    assertThat(readDra.isDefault()).as("ClusterReader.readDra has a default").isFalse();
  }

  @Test
  void aWrappingPortAnswersItsDelegatesDraObjects() throws Exception {
    InMemoryCluster cluster = InMemoryCluster.create();
    DraObjects dra =
        new DraObjects(
            List.of(),
            List.of(
                new ResourceClaimView(
                    "default",
                    "c1",
                    "u1",
                    true,
                    "gpu-1",
                    List.of(
                        new ResourceClaimView.Result(
                            "gpu.nvidia.com",
                            "gpu-1",
                            "gpu-0",
                            Optional.empty(),
                            java.util.Map.of(),
                            false)),
                    Set.of())));
    cluster.setDra(dra);

    ClusterReader hooked = PortHooks.reader(cluster, p -> p, n -> {});

    assertThat(hooked.readDra(List.of("gpu-1"))).isEqualTo(dra);
  }
}
