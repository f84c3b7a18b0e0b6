package dev.hamilock.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.BackendFailure;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.device.nvidia.NvidiaVendor;
import dev.hamilock.device.spi.ResourceNames;
import dev.hamilock.device.spi.VendorConfig;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * {@link FlowFailure#of} maps a backend failure's kind by name: every {@link BackendFailure.Kind}
 * must have its twin (a kind added without one fails here, not in a flow that promises never to
 * throw) and keeps its HTTP status; {@link VendorConfig#of} gives HAMi's chart defaults.
 */
class FlowFailureKindMappingTest {

  @Test
  void everyBackendKindMapsToTheSameNamedFlowKindWithItsStatus() {
    for (BackendFailure.Kind k : BackendFailure.Kind.values()) {
      FlowFailure viaLock =
          FlowFailure.of("m", new LockBackendException(k, "x", null), FlowFailure.Kind.REPORTED);
      FlowFailure viaCluster =
          FlowFailure.of(
              "m",
              new ClusterException(k, "x", null, OptionalInt.of(503)),
              FlowFailure.Kind.REPORTED);
      assertThat(viaLock.kind().name()).isEqualTo(k.name());
      assertThat(viaCluster.kind().name()).isEqualTo(k.name());
      assertThat(viaCluster.httpStatus()).hasValue(503);
    }
    // the alias field resolves by the constant's name
    assertThat(
            FlowFailure.of(
                    "m",
                    new LockBackendException(BackendFailure.Kind.NODE_NOT_FOUND, "x", null),
                    FlowFailure.Kind.REPORTED)
                .kind())
        .isEqualTo(FlowFailure.Kind.NOT_FOUND);
  }

  @Test
  void vendorConfigOfIsTheOldBuilderWithOnlyMemory() {
    Optional<String> none = Optional.empty();
    assertThat(VendorConfig.of("a/gpu", "a/mem"))
        .isEqualTo(
            new VendorConfig(
                new ResourceNames("a/gpu", Optional.of("a/mem"), none, none, none), 0, 0, 1, 1));
    assertThat(VendorConfig.of("a/gpu", null).resourceNames().memory()).isEmpty();
    assertThat(new NvidiaVendor().defaultConfig().resourceNames().all())
        .containsExactly(
            "nvidia.com/gpu",
            "nvidia.com/gpumem",
            "nvidia.com/gpumem-percentage",
            "nvidia.com/gpucores",
            "nvidia.com/priority");
  }
}
