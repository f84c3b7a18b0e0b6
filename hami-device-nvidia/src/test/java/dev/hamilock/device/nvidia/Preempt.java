package dev.hamilock.device.nvidia;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.preempt.PreemptionPlanner;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Test helpers of the preemption planner's tests: pods placed by the Filter's own fit. */
final class Preempt {
  static final VendorRegistry REG = VendorRegistry.builder().register(new NvidiaVendor()).build();
  static final PodFitter FITTER = PodFitter.create(REG);
  static final UsageReconstructor USAGE = new UsageReconstructor(REG);
  static final PreemptionPlanner PLANNER =
      new PreemptionPlanner(FITTER, java.time.InstantSource.system());

  private Preempt() {}

  /** A container asking {@code gpus} cards of {@code mib} MiB and {@code cores} % each. */
  static ContainerView gpu(int gpus, int mib, int cores) {
    Map<String, String> l = new HashMap<>();
    l.put("nvidia.com/gpu", "" + gpus);
    l.put("nvidia.com/gpumem", "" + mib);
    if (cores > 0) {
      l.put("nvidia.com/gpucores", "" + cores);
    }
    return Nv.container("c", l, Map.of());
  }

  /** A pending pod of one such container, optionally in a gang (Coscheduling label). */
  static PodView pod(String name, ContainerView c, Optional<String> gang) {
    return PodView.builder("ns", name)
        .uid(name)
        .containers(List.of(c))
        .labels(gang.map(g -> Map.of(HamiAnnotations.POD_GROUP_LABEL, g)).orElse(Map.of()))
        .build();
  }

  /**
   * Places the pod on the node as the Filter would, given the pods already there.
   *
   * @return the Running pod with its allocation annotations, empty if it does not fit
   */
  static Optional<PodView> place(NodeView node, Collection<PodView> there, PodView p) {
    List<PodView> same = there.stream().filter(q -> node.name().equals(nodeOf(q))).toList();
    FilterResult r;
    try {
      r = FITTER.filter(p, List.of(USAGE.nodeUsage(node, same)));
    } catch (InvalidPodRequestException e) {
      throw new AssertionError("setup pod " + p.key(), e);
    }
    return r.best()
        .map(
            fit ->
                p.toBuilder()
                    .phase(PodView.Phase.RUNNING)
                    .nodeName(node.name())
                    .annotations(
                        Map.of(
                            HamiAnnotations.VGPU_NODE,
                            node.name(),
                            NvidiaAnnotations.ALLOCATED,
                            PodDevicesCodec.encode(fit.devices().forVendor("NVIDIA"))))
                    .build());
  }

  /**
   * A Running pod on {@code node} whose one container holds {@code mib} MiB and {@code cores} % of
   * each of {@code uuids} (the allocation written as the Filter writes it).
   */
  static PodView allocated(String name, String node, int mib, int cores, String... uuids) {
    List<ContainerDevice> devices = new ArrayList<>();
    for (String u : uuids) {
      devices.add(new ContainerDevice(0, u, "NVIDIA", mib, cores, 0));
    }
    return pod(name, gpu(uuids.length, mib, cores), Optional.empty()).toBuilder()
        .phase(PodView.Phase.RUNNING)
        .nodeName(node)
        .annotations(
            Map.of(
                HamiAnnotations.VGPU_NODE,
                node,
                NvidiaAnnotations.ALLOCATED,
                PodDevicesCodec.encode(List.of(devices))))
        .build();
  }

  static String nodeOf(PodView p) {
    return p.nodeName().orElseThrow();
  }

  /** Whether the preemptor fits on the node once the pods named in {@code gone} are gone. */
  static boolean fitsWithout(
      PodView preemptor, NodeView node, Collection<RunningPod> pods, Set<String> gone)
      throws Exception {
    List<PodView> kept = new ArrayList<>();
    pods.stream().filter(p -> !gone.contains(p.key())).forEach(p -> kept.add(p.pod()));
    return FITTER.fit(preemptor, USAGE.nodeUsage(node, kept)).fits();
  }

  static RunningPod running(PodView p, int priority, long startSecond) {
    return RunningPod.of(
        p.toBuilder().priority(priority).build(), Instant.ofEpochSecond(startSecond));
  }
}
