package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerRole;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** Codec round trips and order-independent usage over generated devices and allocations. */
class CodecProperties {
  /**
   * 0–8 devices: id [a-z0-9-]{1,20}, index/count/memory 0–2^31-1, NUMA -2–8, type of printable
   * ASCII but ',' ':' (1–30), mode, health.
   */
  static Gen<List<DeviceInfo>> devices() {
    Gen<String> id = Gens.strings(Gens.LOWER + Gens.DIGITS + "-", 1, 20);
    Gen<String> type = Gens.strings(Gens.range(' ', '~').replace(",", "").replace(":", ""), 1, 30);
    Gen<Integer> nn = integers().between(0, Integer.MAX_VALUE);
    Gen<Integer> numa = integers().between(-2, 8);
    Gen<String> mode = Generate.pick(List.of("hami-core", "mig", "mps", "x"));
    Gen<Boolean> health = booleans().all();
    Gen<DeviceInfo> d =
        in ->
            new DeviceInfo(
                id.generate(in),
                nn.generate(in) % 64,
                nn.generate(in),
                nn.generate(in),
                100,
                type.generate(in),
                numa.generate(in),
                mode.generate(in),
                List.of(),
                health.generate(in),
                "V");
    return lists().of(d).ofSizeBetween(0, 8);
  }

  @Test
  void colonRoundTrip() {
    Props.qt(200)
        .forAll(devices())
        .checkAssert(
            ds ->
                Props.unchecked(
                    () ->
                        assertThat(
                                NodeRegistrationCodec.decodeColon(
                                    NodeRegistrationCodecTest.encodeColon(ds)
                                        + (ds.isEmpty() ? ":" : ""),
                                    "V"))
                            .isEqualTo(ds)));
  }

  @Test
  void jsonRoundTrip() {
    Props.qt(200)
        .forAll(devices())
        .checkAssert(
            ds ->
                Props.unchecked(
                    () ->
                        assertThat(
                                NodeRegistrationCodec.decodeJson(
                                    NodeRegistrationCodec.encodeJson(ds), "V"))
                            .isEqualTo(ds)));
  }

  /** 0–5 containers of 0–3 devices: uuid [A-Z0-9-]{1,12}, vendor, memory and cores 0–2^31-1. */
  static Gen<List<List<ContainerDevice>>> podDevices() {
    Gen<String> uuid = Gens.strings(Gens.UPPER + Gens.DIGITS + "-", 1, 12);
    Gen<String> vendor = Generate.pick(List.of("NVIDIA", "AMD", "X"));
    Gen<Integer> nn = integers().between(0, Integer.MAX_VALUE);
    Gen<ContainerDevice> d =
        in ->
            ContainerDevice.of(
                uuid.generate(in), vendor.generate(in), nn.generate(in), nn.generate(in));
    return lists().of(lists().of(d).ofSizeBetween(0, 3)).ofSizeBetween(0, 5);
  }

  @Test
  void podDevicesRoundTrip() {
    Props.qt(300)
        .forAll(podDevices())
        .checkAssert(
            pod ->
                Props.unchecked(
                    () -> {
                      String v = PodDevicesCodec.encode(pod);
                      assertThat(PodDevicesCodec.decode(v)).isEqualTo(pod);
                      assertThat(v.chars().filter(c -> c == ';').count()).isEqualTo(pod.size());
                    }));
  }

  @Test
  void usageIsOrderIndependent() {
    Props.qt(100)
        .forAll(podDevices(), longs().all())
        .checkAssert(CodecProperties::usageIsOrderIndependent);
  }

  private static void usageIsOrderIndependent(List<List<ContainerDevice>> seeds, long seed) {
    UsageReconstructor u = new UsageReconstructor(RegistryAndUsageTest.REG);
    List<PodView> pods = new ArrayList<>();
    Random r = new Random(seed);
    int i = 0;
    for (List<ContainerDevice> c : seeds) {
      String alloc =
          c.isEmpty()
              ? "GPU0,T,1,1:;"
              : PodDevicesCodec.encode(
                  List.of(
                      List.of(
                          ContainerDevice.of(
                              r.nextBoolean() ? "GPU0" : "GPU1",
                              "T",
                              r.nextInt(5000),
                              r.nextInt(50)))));
      if (r.nextInt(10) == 0) {
        alloc = "broken" + i;
      }
      pods.add(RegistryAndUsageTest.pod("p" + i++, "n", alloc, r.nextInt(2), 1 + r.nextInt(2)));
    }
    NodeUsage a = u.nodeUsage(RegistryAndUsageTest.node("n"), pods);
    List<PodView> shuffled = new ArrayList<>(pods);
    Collections.shuffle(shuffled, r);
    NodeUsage b = u.nodeUsage(RegistryAndUsageTest.node("n"), shuffled);
    assertThat(b.devices()).isEqualTo(a.devices());
    assertThat(b.status()).isEqualTo(a.status());
    assertThat(b.unavailableReason()).isEqualTo(a.unavailableReason());
  }

  /**
   * Breaker: whatever entries a writer dropped (HAMi's padding drift, spec §7.25, leaves out empty
   * ones), each card's collapsed usage is never under the usage of the pod's true alignment (one
   * entry per container, read by role): memory, cores and slots. Fails with every entry read by its
   * index's role.
   */
  @Test
  void collapseOfDroppedEntriesIsNeverUnderTheTrueAlignment() {
    Props.qt(300).forAll(longs().all()).checkAssert(CodecProperties::neverUnderTheTrueAlignment);
  }

  private static void neverUnderTheTrueAlignment(long seed) {
    Random r = new Random(seed);
    int n = 1 + r.nextInt(6);
    List<ContainerRole> roles = new ArrayList<>();
    List<List<ContainerDevice>> truth = new ArrayList<>();
    List<List<ContainerDevice>> written = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      roles.add(ContainerRole.values()[r.nextInt(ContainerRole.values().length)]);
      List<ContainerDevice> c = new ArrayList<>();
      for (int d = r.nextInt(3); d > 0; d--) {
        c.add(ContainerDevice.of("GPU" + r.nextInt(2), "T", r.nextInt(5000), r.nextInt(50)));
      }
      truth.add(c);
      if (!c.isEmpty() || r.nextBoolean()) {
        written.add(c);
      }
    }
    Map<String, ContainerDevice> want = new HashMap<>();
    UsageReconstructor.collapse(truth, roles).forEach(d -> want.put(d.uuid(), d));
    for (ContainerDevice got : UsageReconstructor.collapse(written, roles)) {
      ContainerDevice w = want.remove(got.uuid());
      assertThat(w).as("card %s of %s read as %s", got.uuid(), truth, written).isNotNull();
      assertThat(List.of(got.usedmem(), got.usedcores(), got.slots()))
          .as("%s roles %s written %s", truth, roles, written)
          .satisfies(
              l -> {
                assertThat(l.get(0)).isGreaterThanOrEqualTo(w.usedmem());
                assertThat(l.get(1)).isGreaterThanOrEqualTo(w.usedcores());
                assertThat(l.get(2)).isGreaterThanOrEqualTo(w.slots());
              });
    }
    assertThat(want).as("cards the written entries lost").isEmpty();
  }
}
