package dev.hamilock.device.spi.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.ResourceNames;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The precondition convention (README "Conventions"): NPE for null, IAE naming the bad value. */
class ChecksTest {

  @Test
  void checkArgumentPassesOrNamesTheBadValues() {
    assertThatCode(() -> Checks.checkArgument(true, "never %s", 1)).doesNotThrowAnyException();
    assertThatThrownBy(() -> Checks.checkArgument(false, "port must be 0..65535: %s", 70000L))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("port must be 0..65535: 70000");
    assertThatThrownBy(() -> Checks.checkArgument(false, "max %s is below min %s", "1s", "2s"))
        .hasMessage("max 1s is below min 2s");
  }

  @Test
  void formatIsGuavasLenientOne() {
    assertThat(Checks.format("100% of %s", "a card")).isEqualTo("100% of a card");
    assertThat(Checks.format("%s and %s", "one")).isEqualTo("one and %s");
    assertThat(Checks.format("no slots", 1, "two")).isEqualTo("no slots [1, two]");
    assertThat(Checks.format("null: %s", (Object) null)).isEqualTo("null: null");
  }

  @Test
  void requireNonBlankThrowsNpeForNullAndIaeNamingTheBlankValue() {
    assertThat(Checks.requireNonBlank("nvidia.com/gpu", "count")).isEqualTo("nvidia.com/gpu");
    assertThatThrownBy(() -> Checks.requireNonBlank(null, "count"))
        .isExactlyInstanceOf(NullPointerException.class)
        .hasMessage("count");
    assertThatThrownBy(() -> Checks.requireNonBlank(" ", "count"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("count must not be blank: \" \"");
  }

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
    assertThatThrownBy(() -> VendorConfig.builder("nvidia.com/gpu").defaultCores(101).build())
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "defaultMemory >= 0, defaultCores in 0..100, defaultGpuNum >= 0 required: 0, 101, 1");
  }
}
