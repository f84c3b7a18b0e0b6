package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.Preempt.FITTER;
import static dev.hamilock.device.nvidia.Preempt.PLANNER;
import static dev.hamilock.device.nvidia.Preempt.REG;
import static dev.hamilock.device.nvidia.Preempt.USAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.preempt.MemberPlan;
import dev.hamilock.device.spi.preempt.NodePlan;
import dev.hamilock.device.spi.preempt.PreemptionPlan;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Props;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Issue 26's gang preemptor ({@link dev.hamilock.device.spi.preempt.PreemptionPlanner#planGang}):
 * for every gang plan, each member fits its node by the Filter's own fit, and with the union of the
 * victims gone and every member counted on the cards its fit chose no card is over-committed
 * (memory, cores, slots, exclusivity: {@link DeviceUsage#overCommit()}; freed slices are never
 * given to two members), and no victim has the gang's priority or more. Falsified by a planner that
 * plans the members independently (each as {@code plan} alone), which double-books freed slices.
 */
class GangPlanProperties {

  /** {@link PreemptionPlannerProperties#cases()} with the preemptor plus 1–2 more members. */
  record GangCase(PreemptionPlannerProperties.Case c, List<PodView> members) {
    @Override
    public String toString() {
      StringBuilder b = new StringBuilder(c.toString());
      members.forEach(m -> b.append("\nmember ").append(m.key()).append(m.containers()));
      return b.toString();
    }
  }

  static Gen<GangCase> gangs() {
    Gen<Integer> more = integers().between(1, 2);
    Gen<Integer> mib = integers().between(1, 16).map(i -> i * 1000);
    Gen<Integer> cores = Generate.pick(List.of(0, 30, 60, 100));
    return PreemptionPlannerProperties.cases()
        .flatMap(
            c ->
                in -> {
                  List<PodView> members = new ArrayList<>(List.of(c.preemptor()));
                  for (int n = more.generate(in), i = 1; i <= n; i++) {
                    members.add(
                        PodView.builder("ns", "member-" + i)
                            .uid("member-" + i)
                            .containers(
                                List.of(Preempt.gpu(1, mib.generate(in), cores.generate(in))))
                            .build());
                  }
                  return new GangCase(c, members);
                });
  }

  @Test
  void everyMemberFitsWithTheUnionGoneAndTheOthersCounted() {
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    Props.qt(300)
        .forAll(gangs())
        .checkAssert(g -> Props.unchecked(() -> seen.putAll(check(g, plan(g)))));
    assertThat(seen.keySet())
        .as("the generator reaches gangs placed with victims, and gangs refused")
        .contains("placed with victims", "two members on one node", "refused");
  }

  @Test
  void aPlannerOfIndependentMembersIsFalsified() {
    Props.Falsified f =
        Props.expectFalsified(
            2000,
            q ->
                q.forAll(gangs())
                    .checkAssert(g -> Props.unchecked(() -> check(g, independent(g)))));
    assertThat(f.cause()).isInstanceOf(AssertionError.class).hasMessageContaining("node-");
  }

  static Optional<List<MemberPlan>> plan(GangCase g) throws Exception {
    var c = g.c();
    return PLANNER.planGang(
        g.members(), c.priority(), c.nodes(), c.pods(), c.pdbs(), DraObjects.NONE);
  }

  /** The falsifier: each member planned as if alone, its fit with its own victims gone only. */
  static Optional<List<MemberPlan>> independent(GangCase g) throws Exception {
    var c = g.c();
    List<MemberPlan> out = new ArrayList<>();
    for (PodView m : g.members()) {
      PreemptionPlan p =
          PLANNER.plan(m, c.priority(), c.nodes(), c.pods(), c.pdbs(), DraObjects.NONE);
      Optional<NodePlan> at =
          p.byNode().values().stream()
              .filter(n -> n.outcome() == NodePlan.Outcome.FITS)
              .findFirst()
              .or(p::best);
      if (at.isEmpty()) {
        return Optional.empty();
      }
      Set<String> gone = keys(at.get().victims());
      NodeView node = node(c.nodes(), at.get().node());
      List<PodView> kept =
          c.pods().stream().filter(r -> !gone.contains(r.key())).map(RunningPod::pod).toList();
      out.add(new MemberPlan(m, at.get(), FITTER.fit(m, USAGE.nodeUsage(node, kept))));
    }
    return Optional.of(out);
  }

  /** The properties, judged on the case itself with the Filter's fit. */
  static Map<String, Integer> check(GangCase g, Optional<List<MemberPlan>> plan) throws Exception {
    var c = g.c();
    Map<String, Integer> seen = new HashMap<>();
    if (plan.isEmpty()) {
      seen.put("refused", 1);
      return seen;
    }
    List<MemberPlan> ms = plan.get();
    assertThat(ms.stream().map(m -> m.pod().key()))
        .containsExactlyElementsOf(g.members().stream().map(PodView::key).toList());
    Set<String> union = new HashSet<>();
    for (MemberPlan m : ms) {
      assertThat(m.plan().victims())
          .as("only pods of lower priority than the gang's")
          .allMatch(v -> v.priority() < c.priority());
      union.addAll(keys(m.plan().victims()));
    }
    if (!union.isEmpty()) {
      seen.put("placed with victims", 1);
    }
    Set<String> nodes = new HashSet<>();
    for (MemberPlan m : ms) {
      assertThat(m.fit().fits()).as("%s fits", m.pod().key()).isTrue();
      if (!nodes.add(m.plan().node())) {
        seen.put("two members on one node", 1);
      }
    }
    for (String name : nodes) { // HAMi's fit is greedy, not monotone: judge the cards, not a re-fit
      NodeView node = node(c.nodes(), name);
      List<PodView> kept = new ArrayList<>();
      c.pods().stream().filter(r -> !union.contains(r.key())).forEach(r -> kept.add(r.pod()));
      ms.stream()
          .filter(m -> m.plan().node().equals(name))
          .forEach(m -> kept.add(placed(m.pod(), name, m.fit())));
      for (DeviceUsage d : USAGE.nodeUsage(node, kept).devices()) {
        assertThat(d.overCommit())
            .as("%s: card %s with %s gone and every member counted", name, d.id(), union)
            .isEmpty();
      }
    }
    return seen;
  }

  /** The member bound where it was placed, holding its fit's cards. */
  static PodView placed(PodView m, String node, NodeFit fit) {
    Map<String, String> a = new HashMap<>(REG.allocationAnnotations(fit.devices()));
    a.put(HamiAnnotations.VGPU_NODE, node);
    return m.toBuilder().nodeName(node).annotations(a).build();
  }

  static NodeView node(List<NodeView> nodes, String name) {
    return nodes.stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
  }

  static Set<String> keys(List<RunningPod> pods) {
    Set<String> out = new HashSet<>();
    pods.forEach(p -> out.add(p.key()));
    return out;
  }
}
