package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class CodecProperties {
  @Provide
  Arbitrary<List<DeviceInfo>> devices() {
    Arbitrary<String> id = Arbitraries.strings().withCharRange('a', 'z').numeric().withChars('-').ofMinLength(1).ofMaxLength(20);
    Arbitrary<String> type = Arbitraries.strings().withCharRange(' ', '~').excludeChars(',', ':').ofMinLength(1).ofMaxLength(30);
    Arbitrary<Integer> nn = Arbitraries.integers().between(0, Integer.MAX_VALUE);
    Arbitrary<DeviceInfo> d = Combinators.combine(id, nn, nn, nn, Arbitraries.integers().between(-2, 8), type,
            Arbitraries.of("hami-core", "mig", "mps", "x"), Arbitraries.of(true, false))
        .as((i, idx, cnt, mem, numa, t, mode, h) -> new DeviceInfo(i, idx % 64, cnt, mem, 100, t, numa, mode, List.of(), h, "V"));
    return d.list().ofMaxSize(8);
  }

  @Property(tries = 200)
  void colonRoundTrip(@ForAll("devices") List<DeviceInfo> ds) throws Exception {
    assertThat(NodeRegistrationCodec.decodeColon(NodeRegistrationCodec.encodeColon(ds) + (ds.isEmpty() ? ":" : ""), "V"))
        .isEqualTo(ds);
  }

  @Property(tries = 200)
  void jsonRoundTrip(@ForAll("devices") List<DeviceInfo> ds) throws Exception {
    assertThat(NodeRegistrationCodec.decodeJson(NodeRegistrationCodec.encodeJson(ds), "V")).isEqualTo(ds);
  }

  @Provide
  Arbitrary<List<List<ContainerDevice>>> podDevices() {
    Arbitrary<ContainerDevice> d = Combinators.combine(
            Arbitraries.strings().withCharRange('A', 'Z').numeric().withChars('-').ofMinLength(1).ofMaxLength(12),
            Arbitraries.of("NVIDIA", "AMD", "X"), Arbitraries.integers().between(0, Integer.MAX_VALUE),
            Arbitraries.integers().between(0, Integer.MAX_VALUE))
        .as(ContainerDevice::of);
    return d.list().ofMaxSize(3).list().ofMaxSize(5);
  }

  @Property(tries = 300)
  void podDevicesRoundTrip(@ForAll("podDevices") List<List<ContainerDevice>> pod) throws Exception {
    String v = PodDevicesCodec.encode(pod);
    assertThat(PodDevicesCodec.decode(v)).isEqualTo(pod);
    assertThat(v.chars().filter(c -> c == ';').count()).isEqualTo(pod.size());
  }

  @Property(tries = 100)
  void usageIsOrderIndependent(@ForAll("podDevices") List<List<ContainerDevice>> seeds, @ForAll long seed) {
    UsageReconstructor u = new UsageReconstructor(RegistryAndUsageTest.REG);
    List<PodView> pods = new ArrayList<>();
    Random r = new Random(seed);
    int i = 0;
    for (List<ContainerDevice> c : seeds) {
      String alloc = c.isEmpty() ? "GPU0,T,1,1:;" : PodDevicesCodec.encode(List.of(List.of(
          ContainerDevice.of(r.nextBoolean() ? "GPU0" : "GPU1", "T", r.nextInt(5000), r.nextInt(50)))));
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
}
