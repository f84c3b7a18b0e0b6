package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The precondition convention (README "Conventions"): NPE for null, IAE naming the bad value. */
class PreconditionConventionTest {

  @Test
  void theModulesValueTypesFollowTheConvention() {
    assertThatThrownBy(
            () ->
                new ResourceNames(
                    null, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty()))
        .isExactlyInstanceOf(NullPointerException.class)
        .hasMessageContaining("count");
    assertThatThrownBy(
            () ->
                new ResourceNames(
                    "nvidia.com/gpu",
                    Optional.of(""),
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty()))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("resource name must not be blank: \"\"");
    assertThatThrownBy(() -> new ContainerDeviceRequest(0, "NVIDIA", 0, 101, 0))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("nums must be positive: 0");
    assertThatThrownBy(() -> new ContainerDeviceRequest(1, "NVIDIA", -1, 101, 0))
        .hasMessage("memreq, coresreq must be >= 0 and mempercentagereq in 0..101: -1, 0, 101");
    assertThatThrownBy(
            () ->
                new VendorConfig(
                    VendorConfig.of("nvidia.com/gpu", null).resourceNames(), 0, 101, 1, 1))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "defaultMemory >= 0, defaultCores in 0..100, defaultGpuNum >= 0 required: 0, 101, 1");
  }
}
