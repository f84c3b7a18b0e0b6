package dev.hamilock.device.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

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
import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** Fit safety and determinism over random clusters and pods. */
class FitProperties {
  static final PodFitter FITTER =
      PodFitter.create(VendorRegistry.builder().register(new NvidiaVendor()).build());

  /**
   * 1–4 nodes of 1–8 NVIDIA cards of real sizes ({@link Gens#CARD_MEMORY_MIB}), each with 0–10 of
   * 10 slots used, 0–100 % of its memory and 0–100 cores used (of 100 or 300), NUMA 0–1.
   */
  static Gen<List<NodeUsage>> clusters() {
    Gen<Integer> mem = Gens.cardMemoryMiB();
    Gen<Integer> used = integers().between(0, 10);
    Gen<Integer> pct = integers().between(0, 100);
    Gen<Integer> numa = integers().between(0, 1);
    Gen<Integer> totalCores = Generate.pick(List.of(100, 100, 300));
    Gen<DeviceUsage> dev =
        in -> {
          int m = mem.generate(in);
          int u = used.generate(in);
          int memPct = pct.generate(in);
          int cores = pct.generate(in);
          int n = numa.generate(in);
          int tc = totalCores.generate(in);
          return new DeviceUsage(
              "x",
              0,
              "NVIDIA",
              "NVIDIA-A100",
              n,
              "hami-core",
              true,
              10,
              u,
              m,
              m / 100 * memPct,
              tc,
              Math.min(tc, cores),
              List.of(),
              false);
        };
    Gen<List<DeviceUsage>> node = lists().of(dev).ofSizeBetween(1, 8);
    return lists()
        .of(node)
        .ofSizeBetween(1, 4)
        .map(
            nodes -> {
              List<NodeUsage> out = new ArrayList<>();
              for (int n = 0; n < nodes.size(); n++) {
                List<DeviceUsage> ds = new ArrayList<>();
                for (int i = 0; i < nodes.get(n).size(); i++) {
                  DeviceUsage d = nodes.get(n).get(i);
                  ds.add(
                      new DeviceUsage(
                          "GPU-" + n + "-" + i,
                          i,
                          d.vendor(),
                          d.type(),
                          d.numa(),
                          d.mode(),
                          true,
                          d.count(),
                          d.used(),
                          d.totalmem(),
                          d.usedmem(),
                          d.totalcore(),
                          d.usedcores(),
                          List.of(),
                          false));
                }
                out.add(NodeUsage.of(NodeView.of("node-" + n, Map.of()), ds));
              }
              return out;
            });
  }

  /**
   * Pods of 0–2 init and 1–3 app containers, each asking (or not) for 1–3 GPUs with
   * no/500/5500/10500 MiB, no/30/100 % memory and no/25/0 cores; GPU and node policies; NUMA
   * binding on or off.
   */
  static Gen<PodView> pods() {
    Gen<Integer> gpus = integers().between(1, 3);
    Gen<String> mem = integers().between(0, 3).map(i -> i == 0 ? null : "" + (i * 5000 - 4500));
    Gen<String> pct = Generate.pick(Arrays.asList(null, "30", "100"));
    Gen<String> cores = Generate.pick(Arrays.asList(null, "25", "0"));
    Gen<Boolean> bool = booleans().all();
    Gen<ContainerView> c =
        in -> {
          int n = gpus.generate(in);
          String m = mem.generate(in);
          String p = pct.generate(in);
          String k = cores.generate(in);
          boolean gpu = bool.generate(in);
          Map<String, String> l = new HashMap<>();
          if (gpu) {
            l.put("nvidia.com/gpu", "" + n);
            if (m != null) l.put("nvidia.com/gpumem", m);
            if (p != null) l.put("nvidia.com/gpumem-percentage", p);
            if (k != null) l.put("nvidia.com/gpucores", k);
          }
          return Nv.container("c", l, Map.of());
        };
    Gen<List<ContainerView>> inits = lists().of(c).ofSizeBetween(0, 2);
    Gen<List<ContainerView>> apps = lists().of(c).ofSizeBetween(1, 3);
    Gen<String> gpuPolicy =
        Generate.pick(List.of("binpack", "spread", "mutex", "numa,binpack", "topology-aware"));
    Gen<String> nodePolicy = Generate.pick(List.of("binpack", "spread"));
    return in -> {
      List<ContainerView> init = inits.generate(in);
      List<ContainerView> app = apps.generate(in);
      String gp = gpuPolicy.generate(in);
      String np = nodePolicy.generate(in);
      boolean numa = bool.generate(in);
      return PodView.builder("ns", "p")
          .initContainers(init)
          .containers(app)
          .annotations(
              Map.of(
                  HamiAnnotations.GPU_SCHEDULER_POLICY,
                  gp,
                  HamiAnnotations.NODE_SCHEDULER_POLICY,
                  np,
                  PodFitter.NUMA_BIND_ANNOTATION,
                  "" + numa))
          .build();
    };
  }

  @Test
  void neverOverCommitsAChosenDevice() {
    Props.qt(300)
        .forAll(clusters(), pods())
        .checkAssert((cluster, pod) -> Props.unchecked(() -> neverOverCommits(cluster, pod)));
  }

  private static void neverOverCommits(List<NodeUsage> cluster, PodView pod) throws Exception {
    FilterResult r = FITTER.filter(pod, cluster);
    if (r.best().isEmpty()) {
      return;
    }
    NodeUsage node =
        cluster.stream().filter(n -> n.name().equals(r.bestNode().get())).findFirst().orElseThrow();
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

  @Test
  void deterministicForEqualInputs() {
    Props.qt(200)
        .forAll(clusters(), pods())
        .checkAssert((cluster, pod) -> Props.unchecked(() -> deterministic(cluster, pod)));
  }

  private static void deterministic(List<NodeUsage> cluster, PodView pod) throws Exception {
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
