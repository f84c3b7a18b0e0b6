package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.Preempt.PLANNER;
import static dev.hamilock.device.nvidia.Preempt.fitsWithout;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.preempt.DisruptionBudget;
import dev.hamilock.device.spi.preempt.NodePlan;
import dev.hamilock.device.spi.preempt.PreemptionPlan;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Issue 26 item 1's properties of {@link dev.hamilock.device.spi.preempt.PreemptionPlanner}, judged
 * by the Filter's own fit on usage rebuilt from the pods left: on every node with a plan the
 * preemptor fits once the victims are gone; no strict subset of the victims' eviction units (a
 * gang, or a lone pod) makes it fit; no victim has the preemptor's priority or more; a gang is
 * evicted whole; a node without victims fits as it is; a node without a plan does not fit even with
 * every lower-priority unit gone. The falsification tests run the same properties on plans made
 * from inputs that hide the pods' cores or the cards' slots (a planner ignoring them) and show they
 * fail.
 */
class PreemptionPlannerProperties {

  /** The cluster, the pods placed on it by the fit, the budgets and the preemptor. */
  record Case(
      List<NodeView> nodes,
      List<RunningPod> pods,
      List<DisruptionBudget> pdbs,
      PodView preemptor,
      int priority) {
    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("preemptor p" + priority + " ");
      preemptor.containers().forEach(c -> b.append(c.limits()));
      b.append(preemptor.annotations());
      nodes.forEach(n -> b.append("\n").append(n.name()).append(" ").append(n.annotations()));
      pods.forEach(
          p ->
              b.append("\n  ")
                  .append(p.key())
                  .append(" p")
                  .append(p.priority())
                  .append(p.gang().map(g -> " gang " + g).orElse(""))
                  .append(" ")
                  .append(p.pod().annotations().get(NvidiaAnnotations.ALLOCATED)));
      pdbs.forEach(d -> b.append("\n").append(d));
      return b.toString();
    }
  }

  /**
   * 1–3 nodes of 1–3 cards of real sizes and models ({@link Gens#CARD_MEMORY_MIB}, {@link
   * Gens#CARD_TYPES}), 2–4 slots each, NUMA 0–1; up to 8 pods of priority 0–3 asking 1–2 cards of
   * 1000–12000 MiB and 0/20/50/100 % cores, some in gangs g1/g2 (members on any node), each placed
   * by the fit where it fits; maybe a budget protecting every other pod (0–1 allowed); a preemptor
   * of priority 1–4 asking 1–2 cards of 1000–30000 MiB and 0/30/60/100 % cores, maybe restricted to
   * one card model.
   */
  static Gen<Case> cases() {
    Gen<Integer> count3 = integers().between(1, 3);
    Gen<Integer> card = Gens.cardIndexes();
    Gen<Integer> slots = integers().between(2, 4);
    Gen<Integer> bit = integers().between(0, 1);
    Gen<Integer> podCount = integers().between(0, 8);
    Gen<Integer> prio = integers().between(0, 3);
    Gen<Integer> gang = integers().between(0, 3);
    Gen<Integer> gpus = Generate.pick(List.of(1, 1, 1, 2));
    Gen<Integer> mib = integers().between(1, 12).map(i -> i * 1000);
    Gen<Integer> cores = Generate.pick(List.of(0, 20, 50, 100));
    Gen<Integer> preMib = integers().between(1, 30).map(i -> i * 1000);
    Gen<Integer> preCores = Generate.pick(List.of(0, 30, 60, 100));
    Gen<Integer> allowed = integers().between(-1, 1);
    Gen<Integer> typeSel = integers().between(-3, 3);
    return in -> {
      List<NodeView> nodes = new ArrayList<>();
      for (int n = count3.generate(in), i = 0; i < n; i++) {
        StringBuilder reg = new StringBuilder();
        for (int k = count3.generate(in), j = 0; j < k; j++) {
          int c = card.generate(in);
          reg.append(
              String.format(
                  "GPU-%d-%d,%d,%d,100,%s,%d,true:",
                  i,
                  j,
                  slots.generate(in),
                  Gens.CARD_MEMORY_MIB.get(c),
                  Gens.CARD_TYPES.get(c),
                  bit.generate(in)));
        }
        nodes.add(NodeView.of("node-" + i, Map.of(NvidiaAnnotations.REGISTER, reg.toString())));
      }
      List<PodView> placed = new ArrayList<>();
      List<RunningPod> pods = new ArrayList<>();
      for (int n = podCount.generate(in), i = 0; i < n; i++) {
        NodeView node = nodes.get(integers().between(0, 2).generate(in) % nodes.size());
        int g = gang.generate(in);
        Optional<String> gangName = g < 2 ? Optional.empty() : Optional.of("g" + (g - 1));
        PodView p =
            Preempt.pod(
                "p" + i,
                Preempt.gpu(gpus.generate(in), mib.generate(in), cores.generate(in)),
                gangName);
        int priority = prio.generate(in);
        Optional<PodView> ok = Preempt.place(node, placed, p);
        if (ok.isPresent()) {
          placed.add(ok.get());
          pods.add(Preempt.running(ok.get(), priority, 1000 + i));
        }
      }
      List<DisruptionBudget> pdbs = new ArrayList<>();
      int a = allowed.generate(in);
      if (a >= 0) {
        Set<String> even = new HashSet<>();
        for (int i = 0; i < pods.size(); i += 2) {
          even.add(pods.get(i).key());
        }
        pdbs.add(new DisruptionBudget("ns/pdb", even, a));
      }
      int t = typeSel.generate(in);
      PodView preemptor =
          PodView.builder("ns", "preemptor")
              .containers(
                  bit.generate(in) == 0
                      ? List.of(
                          Preempt.gpu(
                              gpus.generate(in), preMib.generate(in), preCores.generate(in)))
                      : List.of(
                          Preempt.gpu(
                              gpus.generate(in), preMib.generate(in), preCores.generate(in)),
                          Preempt.gpu(
                              gpus.generate(in), preMib.generate(in), preCores.generate(in))))
              .annotations(
                  t < 0 ? Map.of() : Map.of(NvidiaAnnotations.USE_GPUTYPE, Gens.CARD_TYPES.get(t)))
              .build();
      return new Case(nodes, pods, pdbs, preemptor, integers().between(1, 4).generate(in));
    };
  }

  @Test
  void everyPlanMakesThePodFitMinimallyWithLowerPriorityWholeGangsOnly() {
    Map<String, Integer> seen = new java.util.concurrent.ConcurrentHashMap<>();
    Props.qt(300)
        .forAll(cases())
        .checkAssert(c -> Props.unchecked(() -> seen.putAll(check(c, plan(c)))));
    assertThat(seen.keySet())
        .as("the generator reaches every outcome, gang victims and several victim units")
        .contains("FITS", "NONE", "PREEMPT", "gang victim", "2+ units");
  }

  @Test
  void aPlannerIgnoringCoresIsFalsified() {
    assertFalsified(c -> withPods(c, cores(d -> 0)));
  }

  @Test
  void aPlannerIgnoringSlotsIsFalsified() {
    assertFalsified(c -> withSlots(c, 100));
  }

  /** The properties fail for plans made from what {@code blind} leaves of each case. */
  static void assertFalsified(UnaryOperator<Case> blind) {
    Props.Falsified f =
        Props.expectFalsified(
            2000,
            q ->
                q.forAll(cases())
                    .checkAssert(c -> Props.unchecked(() -> check(c, plan(blind.apply(c))))));
    assertThat(f.cause()).isInstanceOf(AssertionError.class).hasMessageContaining("node-");
  }

  static PreemptionPlan plan(Case c) throws Exception {
    return PLANNER.plan(
        c.preemptor(), c.priority(), c.nodes(), c.pods(), c.pdbs(), DraObjects.NONE);
  }

  /**
   * The properties, judged on {@code c} (the plan may come from a doctored copy of it).
   *
   * @return what was seen (outcomes, gang victims, several victim units), for coverage
   */
  static Map<String, Integer> check(Case c, PreemptionPlan plan) throws Exception {
    Map<String, Integer> seen = new HashMap<>();
    Map<String, List<RunningPod>> units = new LinkedHashMap<>();
    c.pods().forEach(p -> units.computeIfAbsent(unit(p), k -> new ArrayList<>()).add(p));
    for (NodeView node : c.nodes()) {
      NodePlan np = plan.byNode().get(node.name());
      Set<String> victims = np.victims().stream().map(RunningPod::key).collect(Collectors.toSet());
      seen.put(np.outcome().name(), 1);
      switch (np.outcome()) {
        case FITS ->
            assertThat(fitsWithout(c.preemptor(), node, c.pods(), Set.of()))
                .as("%s: fits as it is", node.name())
                .isTrue();
        case NONE -> {
          Set<String> all = new HashSet<>();
          units.values().stream()
              .filter(u -> onNode(u, node) && u.stream().allMatch(p -> p.priority() < c.priority()))
              .forEach(u -> u.forEach(p -> all.add(p.key())));
          assertThat(fitsWithout(c.preemptor(), node, c.pods(), all))
              .as("%s: no plan, yet it fits with every lower unit gone", node.name())
              .isFalse();
        }
        case PREEMPT -> {
          assertThat(victims).isNotEmpty();
          assertThat(np.victims())
              .as("only strictly lower priorities")
              .allMatch(v -> v.priority() < c.priority());
          List<List<RunningPod>> vu =
              units.values().stream()
                  .filter(u -> u.stream().anyMatch(p -> victims.contains(p.key())))
                  .toList();
          vu.forEach(
              u ->
                  assertThat(victims)
                      .as("gang whole")
                      .containsAll(u.stream().map(RunningPod::key).toList()));
          if (np.victims().stream().anyMatch(v -> v.gang().isPresent())) {
            seen.put("gang victim", 1);
          }
          if (vu.size() > 1) {
            seen.put("2+ units", 1);
          }
          assertThat(fitsWithout(c.preemptor(), node, c.pods(), victims))
              .as("%s: fits once %s are gone", node.name(), victims)
              .isTrue();
          for (int mask = 0; mask < (1 << vu.size()) - 1; mask++) {
            Set<String> subset = new HashSet<>();
            for (int i = 0; i < vu.size(); i++) {
              if ((mask & (1 << i)) != 0) {
                vu.get(i).forEach(p -> subset.add(p.key()));
              }
            }
            assertThat(fitsWithout(c.preemptor(), node, c.pods(), subset))
                .as("%s: a strict subset %s of %s suffices", node.name(), subset, victims)
                .isFalse();
          }
        }
      }
    }
    return seen;
  }

  static String unit(RunningPod p) {
    return p.gang().map(g -> "gang " + g).orElse(p.key());
  }

  static boolean onNode(List<RunningPod> unit, NodeView node) {
    return unit.stream().anyMatch(p -> node.name().equals(Preempt.nodeOf(p.pod())));
  }

  /** Each pod's allocated entries rewritten. */
  static Case withPods(Case c, UnaryOperator<ContainerDevice> f) {
    List<RunningPod> pods = new ArrayList<>();
    for (RunningPod p : c.pods()) {
      Map<String, String> a = new HashMap<>(p.pod().annotations());
      List<List<ContainerDevice>> alloc =
          decode(a.get(NvidiaAnnotations.ALLOCATED)).stream()
              .map(l -> l.stream().map(f).toList())
              .toList();
      a.put(NvidiaAnnotations.ALLOCATED, PodDevicesCodec.encode(alloc));
      pods.add(
          new RunningPod(
              p.pod().toBuilder().annotations(a).build(), p.priority(), p.startTime(), p.gang()));
    }
    return new Case(c.nodes(), pods, c.pdbs(), c.preemptor(), c.priority());
  }

  static List<List<ContainerDevice>> decode(String allocation) {
    try {
      return PodDevicesCodec.decode(allocation);
    } catch (DeviceAnnotationException e) {
      throw new AssertionError("the fit wrote " + allocation, e);
    }
  }

  static UnaryOperator<ContainerDevice> cores(java.util.function.IntUnaryOperator f) {
    return d ->
        new ContainerDevice(
            d.index(), d.uuid(), d.type(), d.usedmem(), f.applyAsInt(d.usedcores()), d.slots());
  }

  /** Every card registered with {@code slots} slots. */
  static Case withSlots(Case c, int slots) {
    List<NodeView> nodes = new ArrayList<>();
    for (NodeView n : c.nodes()) {
      String reg = n.annotations().get(NvidiaAnnotations.REGISTER);
      nodes.add(
          NodeView.of(
              n.name(),
              Map.of(
                  NvidiaAnnotations.REGISTER,
                  reg.replaceAll("(GPU-\\d+-\\d+),\\d+,", "$1," + slots + ","))));
    }
    return new Case(nodes, c.pods(), c.pdbs(), c.preemptor(), c.priority());
  }
}
