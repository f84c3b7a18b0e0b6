package dev.hamilock.bind.scenarios;

import dev.hamilock.bind.testing.Scenario;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * jqwik arbitraries for {@link Scenario}s, built structurally so that counterexamples shrink
 * (fewer nodes, GPUs, gangs, members; smaller requests). Bounds as {@code ScenarioGenerator}: 1–4
 * nodes with 1–8 GPUs of 15360/24576/40960/81920 MiB; 1–3 gangs of 2–8 pods asking 1–2 GPUs with
 * {@code gpumem} 500–20000 MiB or {@code gpumem-percentage} 1–100, {@code gpucores} 0–100 (about
 * one in six exclusive); 2–4 replicas; Allocate 0–30 ms; some plugin failures and binding faults.
 * Published in this module's test-jar for hami-lock-k8s's emulator run.
 */
public final class ScenarioArbitraries {
  private static final int[] CARDS = {15360, 24576, 40960, 81920};
  private static final String[] TYPES = {"NVIDIA-Tesla T4", "NVIDIA A10", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"};

  private ScenarioArbitraries() {}

  /** A pod's shape before it gets a name and a replica. */
  private record Shape(int gpus, int memory, int percentage, int cores, int replicaSeed, int delayMicros,
      boolean fails, Scenario.BindingFault fault) {}

  /** @return scenarios within the property's bounds */
  public static Arbitrary<Scenario> scenarios() {
    Arbitrary<List<List<Integer>>> nodes = Arbitraries.integers().between(0, CARDS.length - 1)
        .list().ofMinSize(1).ofMaxSize(8)
        .list().ofMinSize(1).ofMaxSize(4);
    Arbitrary<List<List<Shape>>> gangs = shapes().list().ofMinSize(2).ofMaxSize(8).list().ofMinSize(1).ofMaxSize(3);
    Arbitrary<Integer> replicas = Arbitraries.integers().between(2, 4);
    return Combinators.combine(nodes, gangs, replicas).as(ScenarioArbitraries::build);
  }

  private static Arbitrary<Shape> shapes() {
    Arbitrary<Integer> gpus = Arbitraries.integers().between(1, 2);
    Arbitrary<int[]> memory = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(500, 20000).map(m -> new int[] {m, 0})),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, 100).map(p -> new int[] {0, p})));
    Arbitrary<Integer> cores = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(5, Arbitraries.integers().between(0, 100)),
        net.jqwik.api.Tuple.of(1, Arbitraries.just(100)));
    Arbitrary<Integer> replicaSeed = Arbitraries.integers().between(0, 11);
    Arbitrary<Integer> delay = Arbitraries.integers().between(0, 30_000);
    Arbitrary<Boolean> fails = Arbitraries.frequency(net.jqwik.api.Tuple.of(9, false), net.jqwik.api.Tuple.of(1, true));
    Arbitrary<Scenario.BindingFault> fault = Arbitraries.frequency(
        net.jqwik.api.Tuple.of(22, Scenario.BindingFault.NONE),
        net.jqwik.api.Tuple.of(1, Scenario.BindingFault.LOST),
        net.jqwik.api.Tuple.of(1, Scenario.BindingFault.APPLIED_BUT_TIMED_OUT));
    return Combinators.combine(gpus, memory, cores, replicaSeed, delay, fails, fault)
        .as((g, m, c, r, d, f, bf) -> new Shape(g, m[0], m[1], c, r, d, f, bf));
  }

  private static Scenario build(List<List<Integer>> nodeCards, List<List<Shape>> gangShapes, int replicas) {
    List<Scenario.NodeSpec> nodes = new ArrayList<>();
    for (int n = 0; n < nodeCards.size(); n++) {
      String name = "node-" + n;
      List<Scenario.GpuSpec> gpus = new ArrayList<>();
      for (int g = 0; g < nodeCards.get(n).size(); g++) {
        int card = nodeCards.get(n).get(g);
        String uuid = "GPU-" + UUID.nameUUIDFromBytes((name + "/" + g).getBytes(StandardCharsets.UTF_8));
        gpus.add(new Scenario.GpuSpec(uuid, CARDS[card], TYPES[card]));
      }
      nodes.add(new Scenario.NodeSpec(name, gpus));
    }
    List<Scenario.GangSpec> gangs = new ArrayList<>();
    for (int g = 0; g < gangShapes.size(); g++) {
      List<Scenario.PodSpec> members = new ArrayList<>();
      for (int m = 0; m < gangShapes.get(g).size(); m++) {
        Shape s = gangShapes.get(g).get(m);
        members.add(new Scenario.PodSpec("g" + g + "-p" + m, s.gpus, s.memory, s.percentage, s.cores,
            s.replicaSeed % replicas, s.delayMicros, s.fails, s.fault));
      }
      gangs.add(new Scenario.GangSpec("gang-" + g, members));
    }
    return new Scenario(nodes, gangs, replicas);
  }
}
