package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Spec §4.4 and §8 V43/V44 (HAMi devices_test.go), plus the device-plugin re-encoding of §3.2. */
class HamiPodDevicesTest {

  private static final ContainerDevice U1 = new ContainerDevice("UUID1", "Type1", 1000, 30);
  private static final ContainerDevice U2 = new ContainerDevice("UUID2", "Type1", 1000, 30);

  @Test
  void v43RoundTripsKeepTheTrailingEmptyContainer() throws HamiException {
    assertThat(HamiPodDevices.decode("")).containsExactly(List.of());
    assertThat(HamiPodDevices.encode(List.of(List.of(U1)))).isEqualTo("UUID1,Type1,1000,30:;");
    assertThat(HamiPodDevices.decode("UUID1,Type1,1000,30:;"))
        .containsExactly(List.of(U1), List.of());
    assertThat(HamiPodDevices.decode("UUID1,Type1,1000,30:;UUID1,Type1,1000,30:;")).hasSize(3);
    assertThat(HamiPodDevices.decode("UUID1,Type1,1000,30:UUID2,Type1,1000,30:;"))
        .containsExactly(List.of(U1, U2), List.of());
  }

  @Test
  void v44DecodesRealValuesAndRejectsMissingFields() throws HamiException {
    String text =
        "GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76,NVIDIA,500,3:;"
            + "GPU-ebe7c3f7-303d-558d-435e-99a160631fe4,NVIDIA,500,3:;";
    assertThat(HamiPodDevices.decode(text))
        .containsExactly(
            List.of(
                new ContainerDevice("GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76", "NVIDIA", 500, 3)),
            List.of(
                new ContainerDevice("GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", "NVIDIA", 500, 3)),
            List.of());
    assertThatThrownBy(() -> HamiPodDevices.decode("uuid,type,100:;"))
        .hasMessage(
            "pod annotation format error, missing fields, do not use nodeName in task spec");
  }

  @Test
  void skipsCommaLessSegmentsAndIgnoresExtraFields() throws HamiException {
    assertThat(HamiPodDevices.decode("garbage:UUID1,Type1,1000,30,extra:"))
        .containsExactly(List.of(U1));
  }

  @Test
  void rejectsNonInt32NumbersWithGoText() {
    assertThatThrownBy(() -> HamiPodDevices.decode("U,NVIDIA,x,3:"))
        .hasMessage("invalid memory field: strconv.ParseInt: parsing \"x\": invalid syntax");
    assertThatThrownBy(() -> HamiPodDevices.decode("U,NVIDIA,1,99999999999:"))
        .hasMessage(
            "invalid core field: strconv.ParseInt: parsing \"99999999999\": value out of range");
  }

  @Test
  void blankingTheFirstEntryGrowsTheTextByOneSemicolon() throws HamiException {
    List<List<ContainerDevice>> pod = HamiPodDevices.decode("A,NVIDIA,1,2:;");
    pod.set(0, List.of());
    assertThat(HamiPodDevices.encode(pod)).isEqualTo(";;");
    List<List<ContainerDevice>> two = HamiPodDevices.decode("A,NVIDIA,1,2:;B,NVIDIA,3,4:;");
    two.set(0, List.of());
    assertThat(HamiPodDevices.encode(two)).isEqualTo(";B,NVIDIA,3,4:;;");
    assertThat(HamiPodDevices.encode(HamiPodDevices.decode(";;"))).isEqualTo(";;;");
  }
}
