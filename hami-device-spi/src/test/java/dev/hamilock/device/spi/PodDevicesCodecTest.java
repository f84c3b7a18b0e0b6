package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Vectors V42-V45, HAMi#1932 / HAMi#2756 / HAMi#991 cases and fixtures F-30..F-38. */
class PodDevicesCodecTest {
  static final ContainerDevice U1 = ContainerDevice.of("UUID1", "Type1", 1000, 30);
  static final ContainerDevice U2 = ContainerDevice.of("UUID2", "Type1", 1000, 30);

  @Test
  void v42_vendorPatchAnnotations() {
    FakeVendor v = new FakeVendor("NVIDIA", "x");
    Map<String, String> a =
        v.encodeAllocation(
            List.of(List.of(ContainerDevice.of("nvidia-device-0", "NVIDIA", 2000, 1))));
    assertThat(a)
        .containsEntry(v.toAllocateAnnotationKey(), "nvidia-device-0,NVIDIA,2000,1:;")
        .containsEntry(v.allocatedAnnotationKey(), "nvidia-device-0,NVIDIA,2000,1:;")
        .hasSize(2);
    assertThat(v.encodeAllocation(List.of())).isEmpty();
  }

  @Test
  void v43_roundTrips() throws Exception {
    assertThat(PodDevicesCodec.encode(List.of())).isEmpty();
    assertThat(PodDevicesCodec.decode("")).isEmpty(); // HAMi: [[]]; we: no containers
    assertThat(PodDevicesCodec.encode(List.of(List.of(U1)))).isEqualTo("UUID1,Type1,1000,30:;");
    assertThat(PodDevicesCodec.decode("UUID1,Type1,1000,30:;"))
        .containsExactly(List.of(U1)); // HAMi adds []
    assertThat(PodDevicesCodec.encode(List.of(List.of(U1), List.of(U1))))
        .isEqualTo("UUID1,Type1,1000,30:;UUID1,Type1,1000,30:;");
    assertThat(PodDevicesCodec.decode("UUID1,Type1,1000,30:;UUID1,Type1,1000,30:;")).hasSize(2);
    assertThat(PodDevicesCodec.encode(List.of(List.of(U1, U2))))
        .isEqualTo("UUID1,Type1,1000,30:UUID2,Type1,1000,30:;");
    assertThat(PodDevicesCodec.decode("UUID1,Type1,1000,30:UUID2,Type1,1000,30:;"))
        .containsExactly(List.of(U1, U2));
  }

  @Test
  void v44_decode() throws Exception {
    String v =
        "GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76,NVIDIA,500,3:;GPU-ebe7c3f7-303d-558d-435e-99a160631fe4,NVIDIA,500,3:;";
    assertThat(PodDevicesCodec.decode(v))
        .containsExactly(
            List.of(
                ContainerDevice.of("GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76", "NVIDIA", 500, 3)),
            List.of(
                ContainerDevice.of("GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", "NVIDIA", 500, 3)));
    assertThatThrownBy(() -> PodDevicesCodec.decode("uuid,type,100:;"))
        .isInstanceOf(DeviceAnnotationException.class)
        .hasMessageContaining("uuid,type,100");
  }

  @Test
  void v45_typeFilteredEncode() {
    List<ContainerDevice> c =
        List.of(
            ContainerDevice.of("GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313", "NVIDIA", 1000, 10),
            ContainerDevice.of("GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76", "AMD", 2000, 20),
            ContainerDevice.of("GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", "NVIDIA", 3000, 30));
    // V45 (HAMi EncodeContainerDeviceType, unused by hami-lock): these entries minus the last ':'
    assertThat(
            PodDevicesCodec.encodeContainer(
                c.stream().filter(d -> d.type().equals("NVIDIA")).toList()))
        .isEqualTo(
            "GPU-936619fc-f6a1-74a8-0bc6-ecf6b3269313,NVIDIA,1000,10:GPU-ebe7c3f7-303d-558d-435e-99a160631fe4,NVIDIA,3000,30:");
  }

  @Test
  void oneSegmentPerContainer_HAMi1932() throws Exception {
    ContainerDevice g = ContainerDevice.of("GPU-1", "NVIDIA", 1000, 0);
    String v = PodDevicesCodec.encode(List.of(List.of(), List.of(g), List.of()));
    assertThat(v).isEqualTo(";GPU-1,NVIDIA,1000,0:;;");
    assertThat(PodDevicesCodec.decode(v)).containsExactly(List.of(), List.of(g), List.of());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "GPU-123,NVIDIA,4096,50:CORRUPTED",
        "GPU-1,NVIDIA,4096:;",
        "GPU-1,NVIDIA,-1,0:;",
        "GPU-1,NVIDIA,1,2147483648:;",
        "GPU-1,NVIDIA,x,0:;",
        ",NVIDIA,1,0:;",
        "lock"
      })
  void strictDecodeNamesSegment(String v) {
    assertThatThrownBy(() -> PodDevicesCodec.decode(v))
        .isInstanceOf(DeviceAnnotationException.class)
        .satisfies(
            e ->
                assertThat(((DeviceAnnotationException) e).segment())
                    .isPresent()
                    .get()
                    .satisfies(seg -> assertThat(v).contains(seg)));
  }

  @Test
  void documentedTolerances() throws Exception {
    // extra fields ignored (as HAMi), missing final ';' ends the container
    assertThat(PodDevicesCodec.decode("GPU-1,NVIDIA,1,2,extra:"))
        .containsExactly(List.of(ContainerDevice.of("GPU-1", "NVIDIA", 1, 2)));
    // HAMi#991 padding ",,0,0" = no device (F-33 first form)
    List<List<ContainerDevice>> f33a = PodDevicesCodec.decode(Fixtures.value("F-33-1"));
    List<List<ContainerDevice>> f33b = PodDevicesCodec.decode(Fixtures.value("F-33-2"));
    assertThat(f33a).isEqualTo(f33b).hasSize(5);
    assertThat(f33a.get(1))
        .extracting(ContainerDevice::uuid)
        .containsExactly("GPU-0aa6b97c-d386-26ba-a94a-b9d27c2e3a71");
  }

  @Test
  void realPodAnnotations() throws Exception {
    Map<String, String> f30 = Fixtures.kv("F-30");
    assertThat(PodDevicesCodec.decode(f30.get("hami.io/vgpu-devices-allocated")))
        .containsExactly(
            List.of(),
            List.of(
                ContainerDevice.of(
                    "GPU-9b9030a3-d81f-7d9f-5d2b-fd98cdc57b2d", "NVIDIA", 6144, 30)));
    assertThat(PodDevicesCodec.decode(f30.get("hami.io/vgpu-devices-to-allocate")))
        .hasSize(3)
        .allSatisfy(c -> assertThat(c).isEmpty());
    for (String id : List.of("F-31", "F-35", "F-36", "F-37", "F-38")) {
      String alloc = Fixtures.kv(id).get("hami.io/vgpu-devices-allocated");
      List<List<ContainerDevice>> d = PodDevicesCodec.decode(alloc);
      assertThat(d).as(id).hasSize(1);
      assertThat(PodDevicesCodec.encode(d)).as(id).isEqualTo(alloc);
    }
  }
}
