package dev.hamilock.device.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Fit safety and determinism over random clusters and pods. */
class FitProperties {
  static final PodFitter FITTER = PodFitter.create(VendorRegistry.builder().register(new NvidiaVendor()).build());

  @Provide
  Arbitrary<List<NodeUsage>> clusters() {
    Arbitrary<DeviceUsage> dev = Combinators.combine(
            Arbitraries.of(15360, 24576, 40960, 81920), Arbitraries.integers().between(0, 10),
            Arbitraries.integers().between(0, 100), Arbitraries.integers().between(0, 100),
            Arbitraries.integers().between(0, 1), Arbitraries.of(100, 100, 300))
        .as((mem, used, memPct, cores, numa, tc) -> new DeviceUsage("x", 0, "NVIDIA", "NVIDIA-A100", numa,
            "hami-core", true, 10, used, mem, mem / 100 * memPct, tc, Math.min(tc, cores), List.of()));
    Arbitrary<List<DeviceUsage>> node = dev.list().ofMinSize(1).ofMaxSize(8);
    return node.list().ofMinSize(1).ofMaxSize(4).map(nodes -> {
      List<NodeUsage> out = new ArrayList<>();
      for (int n = 0; n < nodes.size(); n++) {
        List<DeviceUsage> ds = new ArrayList<>();
        for (int i = 0; i < nodes.get(n).size(); i++) {
          DeviceUsage d = nodes.get(n).get(i);
          ds.add(new DeviceUsage("GPU-" + n + "-" + i, i, d.vendor(), d.type(), d.numa(), d.mode(), true,
              d.count(), d.used(), d.totalmem(), d.usedmem(), d.totalcore(), d.usedcores(), List.of()));
        }
        out.add(NodeUsage.of(NodeView.of("node-" + n, Map.of()), ds));
      }
      return out;
    });
  }

  @Provide
  Arbitrary<PodView> pods() {
    Arbitrary<ContainerView> c = Combinators.combine(Arbitraries.integers().between(1, 3),
            Arbitraries.integers().between(0, 3).map(i -> i == 0 ? null : "" + (i * 5000 - 4500)),
            Arbitraries.of(null, "30", "100"), Arbitraries.of(null, "25", "0"), Arbitraries.of(true, false))
        .as((n, mem, pct, cores, gpu) -> {
          Map<String, String> l = new HashMap<>();
          if (gpu) {
            l.put("nvidia.com/gpu", "" + n);
            if (mem != null) l.put("nvidia.com/gpumem", mem);
            if (pct != null) l.put("nvidia.com/gpumem-percentage", pct);
            if (cores != null) l.put("nvidia.com/gpucores", cores);
          }
          return Nv.container("c", l, Map.of());
        });
    return Combinators.combine(c.list().ofMaxSize(2), c.list().ofMinSize(1).ofMaxSize(3),
            Arbitraries.of("binpack", "spread", "mutex", "numa,binpack", "topology-aware"),
            Arbitraries.of("binpack", "spread"), Arbitraries.of(true, false))
        .as((init, app, gpu, node, numa) -> PodView.builder("ns", "p").initContainers(init).containers(app)
            .annotations(Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, gpu, HamiAnnotations.NODE_SCHEDULER_POLICY, node,
                NvidiaAnnotations.NUMA_BIND, "" + numa)).build());
  }

  @Property(tries = 300)
  void neverOverCommitsAChosenDevice(@ForAll("clusters") List<NodeUsage> cluster, @ForAll("pods") PodView pod)
      throws Exception {
    FilterResult r = FITTER.filter(pod, cluster);
    if (r.best().isEmpty()) {
      return;
    }
    NodeUsage node = cluster.stream().filter(n -> n.name().equals(r.bestNode().get())).findFirst().orElseThrow();
    List<List<ContainerDevice>> nv = r.best().get().devices().forVendor("NVIDIA");
    assertThat(nv).hasSize(pod.containerCount());
    int inits = pod.initContainers().size();
    // regular containers accumulate; each init container alone on the pre-pod usage
    List<DeviceUsage> regular = new ArrayList<>(node.devices());
    for (int ci = 0; ci < nv.size(); ci++) {
      List<DeviceUsage> base = ci < inits ? new ArrayList<>(node.devices()) : regular;
      for (ContainerDevice cd : nv.get(ci)) {
        int p = node.positionOf(cd.uuid());
        DeviceUsage before = base.get(p);
        DeviceUsage after = before.withAllocation(cd);
        assertThat(after.used()).isLessThanOrEqualTo(after.count());
        assertThat(after.usedmem()).isLessThanOrEqualTo(after.totalmem());
        assertThat(after.usedcores()).isLessThanOrEqualTo(after.totalcore());
        base.set(p, after);
      }
      long distinct = nv.get(ci).stream().map(ContainerDevice::uuid).distinct().count();
      assertThat(distinct).as("a container never gets one card twice").isEqualTo(nv.get(ci).size());
    }
  }

  @Property(tries = 200)
  void deterministicForEqualInputs(@ForAll("clusters") List<NodeUsage> cluster, @ForAll("pods") PodView pod)
      throws Exception {
    FilterResult a = FITTER.filter(pod, cluster);
    FilterResult b = FITTER.filter(pod, List.copyOf(cluster));
    assertThat(b).isEqualTo(a);
    List<NodeUsage> reversed = new ArrayList<>(cluster);
    java.util.Collections.reverse(reversed);
    FilterResult c = FITTER.filter(pod, reversed);
    assertThat(c.best()).as("node choice independent of candidate order").isEqualTo(a.best());
    assertThat(c.failedNodes()).isEqualTo(a.failedNodes());
  }
}
