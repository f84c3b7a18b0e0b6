package dev.hamilock.bind.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/**
 * Random {@link Scenario}s from a seeded {@link Random}, within the property's bounds: 1–4 nodes
 * with 1–8 GPUs each (15360, 24576, 40960 or 81920 MiB, split count 10), 1–3 gangs of 2–8 pods,
 * each asking for 1–2 GPUs with {@code gpumem} 500–20000 MiB or {@code gpumem-percentage} 1–100,
 * {@code gpucores} 0–100 (about one pod in six exclusive, cores 100), 2–4 replicas, an Allocate of
 * 0–30 ms, about one plugin failure in ten pods and one binding fault in twelve; in about one
 * one-node scenario in three, one pod's Allocate stalls past the lock timeout ({@link
 * Scenario.PodSpec#allocateStallsPastLockTimeout()}, HAMi#3096). Backend- and framework-neutral, so
 * property-test generators and plain loops can share its bounds.
 */
public final class ScenarioGenerator {
  /** Real card sizes in MiB (T4/A10-class 16 GB usable, 24 GB, A100 40 GB, A100/H100 80 GB). */
  public static final int[] CARD_MEMORY_MIB = {15360, 24576, 40960, 81920};

  private static final String[] CARD_TYPES = {
    "NVIDIA-Tesla T4", "NVIDIA A10", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"
  };

  private ScenarioGenerator() {}

  /**
   * @param rnd the randomness (seed it for reproducibility)
   */
  public static Scenario random(Random rnd) {
    int nodeCount = 1 + rnd.nextInt(4);
    List<Scenario.NodeSpec> nodes = new ArrayList<>();
    for (int n = 0; n < nodeCount; n++) {
      int gpus = 1 + rnd.nextInt(8);
      List<Scenario.GpuSpec> list = new ArrayList<>();
      for (int g = 0; g < gpus; g++) {
        int card = rnd.nextInt(CARD_MEMORY_MIB.length);
        list.add(
            new Scenario.GpuSpec(
                "GPU-" + new UUID(rnd.nextLong(), rnd.nextLong()),
                CARD_MEMORY_MIB[card],
                CARD_TYPES[card]));
      }
      nodes.add(new Scenario.NodeSpec("node-" + n, list));
    }
    int replicas = 2 + rnd.nextInt(3);
    int gangCount = 1 + rnd.nextInt(3);
    List<Scenario.GangSpec> gangs = new ArrayList<>();
    for (int g = 0; g < gangCount; g++) {
      int size = 2 + rnd.nextInt(7);
      List<Scenario.PodSpec> members = new ArrayList<>();
      for (int m = 0; m < size; m++) {
        members.add(randomPod(rnd, "g" + g + "-p" + m, replicas));
      }
      gangs.add(new Scenario.GangSpec("gang-" + g, members));
    }
    if (nodeCount == 1 && rnd.nextInt(3) == 0) {
      gangs = withOneStalledAllocate(gangs, rnd);
    }
    return new Scenario(nodes, gangs, replicas);
  }

  /**
   * A one-node scenario in which some pods' device-plugin Allocate stalls past the lock timeout
   * (HAMi#3096): 1 node, 1–3 gangs, at least one stalled pod (each pod one time in three).
   */
  public static Scenario stalledPlugin(Random rnd) {
    Scenario base;
    do {
      base = random(rnd);
    } while (base.nodes().size() != 1);
    List<Scenario.GangSpec> gangs = new ArrayList<>();
    boolean any = false;
    for (Scenario.GangSpec g : base.gangs()) {
      List<Scenario.PodSpec> members = new ArrayList<>();
      for (Scenario.PodSpec p : g.members()) {
        boolean stall = rnd.nextInt(3) == 0;
        any |= stall;
        members.add(p.withAllocateStall(stall));
      }
      gangs.add(new Scenario.GangSpec(g.name(), members));
    }
    if (!any) {
      gangs = withOneStalledAllocate(gangs, rnd);
    }
    return new Scenario(base.nodes(), gangs, base.replicas());
  }

  private static List<Scenario.GangSpec> withOneStalledAllocate(
      List<Scenario.GangSpec> gangs, Random rnd) {
    int gang = rnd.nextInt(gangs.size());
    List<Scenario.GangSpec> out = new ArrayList<>(gangs);
    Scenario.GangSpec g = gangs.get(gang);
    List<Scenario.PodSpec> members = new ArrayList<>(g.members());
    int m = rnd.nextInt(members.size());
    members.set(m, members.get(m).withAllocateStall(true));
    out.set(gang, new Scenario.GangSpec(g.name(), members));
    return out;
  }

  private static Scenario.PodSpec randomPod(Random rnd, String name, int replicas) {
    int gpus = 1 + rnd.nextInt(2);
    boolean percentage = rnd.nextInt(4) == 0;
    int mem = percentage ? 0 : 500 + rnd.nextInt(19501);
    int pct = percentage ? 1 + rnd.nextInt(100) : 0;
    int cores = rnd.nextInt(6) == 0 ? 100 : rnd.nextInt(101);
    int fault = rnd.nextInt(24);
    Scenario.BindingFault bf =
        fault == 0
            ? Scenario.BindingFault.LOST
            : fault == 1 ? Scenario.BindingFault.APPLIED_BUT_TIMED_OUT : Scenario.BindingFault.NONE;
    return new Scenario.PodSpec(
        name,
        gpus,
        mem,
        pct,
        cores,
        rnd.nextInt(replicas),
        rnd.nextInt(30_001),
        rnd.nextInt(10) == 0,
        bf);
  }
}
