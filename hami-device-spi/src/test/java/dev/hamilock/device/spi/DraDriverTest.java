package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A third-party vendor maps its own DRA driver through {@link DeviceVendor#draDrivers()}. */
class DraDriverTest {
  static final DraDriver ACCEL =
      new DraDriver(
          "accel.example.com",
          "serial",
          Optional.empty(),
          Optional.of("mem"),
          Optional.of("accel.example.com/compute"));

  static FakeVendor xpu(DraDriver... drivers) {
    return new FakeVendor("XPU", "example.com") {
      @Override
      public List<DraDriver> draDrivers() {
        return List.of(drivers);
      }
    };
  }

  @Test
  void thirdPartyDriverWithDomainQualifiedNamesCountsItsShares() {
    VendorRegistry reg = VendorRegistry.builder().register(xpu(ACCEL)).build();
    NodeView node =
        NodeView.of("n1", Map.of("hami.io/node-XPU-register", "XPU-7,4,16384,100,XPU-X1,0,true:"));
    ResourceSliceView slice =
        new ResourceSliceView(
            "s",
            "accel.example.com",
            "n1",
            1,
            "n1",
            List.of(
                new ResourceSliceView.Device(
                    "accel-0", Map.of("accel.example.com/serial", "XPU-7"), Map.of())));
    ResourceClaimView claim =
        new ResourceClaimView(
            "ns",
            "c",
            "u",
            true,
            "",
            List.of(
                new ResourceClaimView.Result(
                    "accel.example.com",
                    "n1",
                    "accel-0",
                    Optional.of("s1"),
                    Map.of(
                        "accel.example.com/mem", BigDecimal.valueOf(1L << 30),
                        "compute", BigDecimal.valueOf(10)),
                    false)),
            Set.of());
    NodeUsage u =
        new UsageReconstructor(reg)
            .nodeUsage(node, List.of(), new DraObjects(List.of(slice), List.of(claim)));
    assertThat(u.status()).isEqualTo(NodeUsage.Status.READY);
    assertThat(u.devices().get(0).usedmem()).isEqualTo(1024);
    assertThat(u.devices().get(0).usedcores()).isEqualTo(10);
    assertThat(u.devices().get(0).used()).isEqualTo(1);
  }

  @Test
  void oneDriverMappedByTwoVendorsIsRejectedNamingBoth() {
    VendorRegistry reg =
        VendorRegistry.builder()
            .register(xpu(ACCEL))
            .register(
                new FakeVendor("YPU", "y.example.com") {
                  @Override
                  public List<DraDriver> draDrivers() {
                    return List.of(ACCEL);
                  }
                })
            .build();
    assertThatThrownBy(() -> new UsageReconstructor(reg))
        .isInstanceOf(VendorRegistrationException.class)
        .hasMessageContaining("accel.example.com")
        .hasMessageContaining("XPU")
        .hasMessageContaining("YPU");
  }

  @Test
  void blankNamesAreRejected() {
    assertThatThrownBy(
            () -> new DraDriver(" ", "uuid", Optional.empty(), Optional.empty(), Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\" \"");
    assertThatThrownBy(
            () -> new DraDriver("d", "", Optional.empty(), Optional.empty(), Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("d");
  }
}
