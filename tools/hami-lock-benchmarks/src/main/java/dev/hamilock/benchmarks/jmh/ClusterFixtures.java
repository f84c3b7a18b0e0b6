package dev.hamilock.benchmarks.jmh;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.InvalidQuantityException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Deterministic inputs for the JMH benchmarks and their smoke test: a synthetic cluster of NVIDIA
 * nodes with partly used cards, the benchmark pod, and real HAMi annotation values.
 *
 * <p>Annotation values come from {@code shared/fixtures/real-values.md}: the 8-GPU registration
 * ({@code fixtures/register-nvidia-8xA10.json}) holds the four complete A10 objects of F-20
 * (HAMi#1940, device plugin v2.9.0, indexes 2–5) verbatim plus four synthesized objects in the same
 * form (indexes 0, 1, 6, 7); the pod-devices value reuses the device ID of F-30.
 */
public final class ClusterFixtures {

  /** NVIDIA's vendor word ({@code CommonWord}). */
  public static final String NVIDIA = "NVIDIA";

  /** A real owner-form lock value (F-53 shape): {@code <RFC 3339 UTC>,<namespace>,<pod>}. */
  public static final String LOCK_VALUE = "2026-06-14T15:05:03Z,default,gang-pod-1";

  /**
   * A two-container {@code hami.io/vgpu-devices-allocated} value: two cards in the first container,
   * one in the second (device IDs from F-30 and F-20).
   */
  public static final String POD_DEVICES_VALUE =
      "GPU-9b9030a3-d81f-7d9f-5d2b-fd98cdc57b2d,NVIDIA,3000,30:GPU-ae833152-60ad-7e72-33e8-cba2c02d7414,NVIDIA,3000,30:;"
          + "GPU-93e9eebc-5547-028e-2f99-2dd791d3ede9,NVIDIA,6144,30:;";

  private static final int[] CARD_MIB = {15360, 23028, 24576, 81920};

  private ClusterFixtures() {}

  /**
   * The vendors found by {@link VendorRegistry#discover()} ({@code ServiceLoader}), as an embedder
   * gets them: hami-device-nvidia registers NVIDIA.
   *
   * @throws IllegalStateException if NVIDIA is not on the class path
   */
  public static VendorRegistry nvidiaRegistry() {
    VendorRegistry registry = VendorRegistry.discover();
    if (registry.vendor(NVIDIA).isEmpty()) {
      throw new IllegalStateException(
          "the NVIDIA vendor (hami-device-nvidia) is not on the class path");
    }
    return registry;
  }

  /**
   * A synthetic cluster: {@code nodes} nodes {@code node-00000…}, each with {@code gpusPerNode}
   * cards of one model (15360, 23028, 24576 or 81920 MiB, 10 slots, 100 cores). Usage is
   * pseudo-random but fixed by {@code seed}: about 40 % of cards idle, the rest carrying 1–4 tasks
   * with up to ~90 % of memory and cores, so some cards and a few whole nodes cannot take a 3000
   * MiB / 30-core request and the node scores differ.
   *
   * @param nodes number of nodes; positive
   * @param gpusPerNode cards per node; positive
   * @return node usages in node-name order
   * @throws IllegalArgumentException if a count is not positive
   */
  public static List<NodeUsage> cluster(int nodes, int gpusPerNode, long seed) {
    checkArgument(
        nodes > 0 && gpusPerNode > 0,
        "nodes and gpusPerNode must be positive, got %s, %s",
        nodes,
        gpusPerNode);
    SplittableRandom random = new SplittableRandom(seed);
    List<NodeUsage> out = new ArrayList<>(nodes);
    for (int n = 0; n < nodes; n++) {
      String name = String.format("node-%05d", n);
      int mib = CARD_MIB[random.nextInt(CARD_MIB.length)];
      boolean busyNode = random.nextInt(10) == 0;
      List<DeviceUsage> devices = new ArrayList<>(gpusPerNode);
      for (int g = 0; g < gpusPerNode; g++) {
        String id =
            String.format("GPU-%08x-%04x-4000-8000-%012x", n, g, (long) n * gpusPerNode + g);
        DeviceUsage idle =
            new DeviceUsage(
                id,
                g,
                NVIDIA,
                "NVIDIA A10",
                g < gpusPerNode / 2 ? 0 : 1,
                "hami-core",
                true,
                10,
                0,
                mib,
                0,
                100,
                0,
                List.of(),
                false);
        int tasks = busyNode ? 4 : (random.nextInt(10) < 4 ? 0 : 1 + random.nextInt(4));
        DeviceUsage used = idle;
        for (int t = 0; t < tasks; t++) {
          int mem = (busyNode ? mib / 4 - 100 : random.nextInt(mib / 5)) / 100 * 100;
          int cores = busyNode ? 23 : random.nextInt(23);
          used = used.withAllocation(ContainerDevice.of(id, NVIDIA, mem, cores));
        }
        devices.add(used);
      }
      out.add(NodeUsage.of(NodeView.of(name, Map.of()), devices));
    }
    return out;
  }

  /**
   * The benchmark pod: one container asking for 1 GPU, 3000 MiB and 30 cores ({@code
   * nvidia.com/gpu: 1}, {@code nvidia.com/gpumem: 3000}, {@code nvidia.com/gpucores: 30}).
   *
   * @param name pod name (namespace {@code default})
   */
  public static PodView gpuPod(String name) {
    try {
      ContainerView c =
          ContainerView.ofQuantities(
              "main",
              "vllm",
              Map.of(
                  "nvidia.com/gpu", "1", "nvidia.com/gpumem", "3000", "nvidia.com/gpucores", "30"),
              Map.of());
      return PodView.builder("default", name).containers(List.of(c)).build();
    } catch (InvalidQuantityException e) {
      throw new IllegalStateException("fixed quantities must parse", e);
    }
  }

  /**
   * @return the 8-GPU JSON {@code hami.io/node-nvidia-register} value (see class doc)
   */
  public static String registrationJson8() {
    return resource("fixtures/register-nvidia-8xA10.json").strip();
  }

  private static String resource(String path) {
    try (InputStream in = ClusterFixtures.class.getClassLoader().getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing class-path resource " + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read class-path resource " + path, e);
    }
  }
}
