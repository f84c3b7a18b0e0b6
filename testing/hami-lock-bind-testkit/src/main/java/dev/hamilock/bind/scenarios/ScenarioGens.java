package dev.hamilock.bind.scenarios;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.testing.generators.Gens;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * QuickTheories generators of {@link Scenario}s, built structurally (lists of card indexes and of
 * pod shapes, mapped to the scenario at the end) so that a counterexample shrinks to fewer nodes,
 * GPUs, gangs and members and smaller requests. Bounds as {@code ScenarioGenerator}: 1–4 nodes with
 * 1–8 GPUs of {@link Gens#CARD_MEMORY_MIB} (15360/24576/40960/81920 MiB); 1–3 gangs of 2–8 pods
 * asking 1–2 GPUs with {@code gpumem} 500–20000 MiB (3 in 4) or {@code gpumem-percentage} 1–100,
 * {@code gpucores} 0–100 (one in five exclusive, 100, and one in five 0); 2–4 replicas; Allocate
 * 0–30 ms; one plugin failure in ten pods, one lost and one applied-but-unanswered Binding in 24.
 * Needs QuickTheories and {@code hami-lock-test-generators} on the class path (optional
 * dependencies).
 */
// exports: the generators return QuickTheories' Gen from an optional (requires static) dependency;
// a caller has QuickTheories to use them, and a transitive requires would force it on every user
@SuppressWarnings("exports")
public final class ScenarioGens {

  private ScenarioGens() {}

  /** A pod's shape before it gets a name and a replica. */
  record Shape(
      int gpus,
      int memory,
      int percentage,
      int cores,
      int replicaSeed,
      int delayMicros,
      boolean fails,
      Scenario.BindingFault fault,
      List<Scenario.InitContainerSpec> inits,
      Scenario.LockRemoval removal) {}

  /**
   * @return scenarios within the property's bounds
   */
  public static Gen<Scenario> scenarios() {
    return scenarios(false);
  }

  /**
   * {@link #scenarios()} where about one card in three (by its UUID's hash, so shrinking keeps the
   * other cards' claims) is {@link Scenario.GpuSpec#claimedByDra}: the fit must count it as used.
   */
  public static Gen<Scenario> scenariosWithDra() {
    return scenarios()
        .map(
            s ->
                new Scenario(
                    s.nodes().stream()
                        .map(
                            n ->
                                new Scenario.NodeSpec(
                                    n.name(),
                                    n.gpus().stream()
                                        .map(
                                            g ->
                                                new Scenario.GpuSpec(
                                                    g.uuid(),
                                                    g.memoryMiB(),
                                                    g.type(),
                                                    Math.floorMod(g.uuid().hashCode(), 3) == 0))
                                        .toList()))
                        .toList(),
                    s.gangs(),
                    s.replicas()));
  }

  /**
   * {@link #scenarios()} plus other actors: half the pods have one or two init containers (native
   * sidecar or run-to-completion, one in two) asking one card with {@code gpumem} 500–8000 MiB and
   * {@code gpucores} 0–50; another writer removes the node lock for 2 pods in 9 before the binder's
   * confirmation and 1 in 9 after it ({@link Scenario.LockRemoval}).
   */
  public static Gen<Scenario> scenariosWithOtherActors() {
    return scenarios(true);
  }

  /**
   * {@link #scenariosWithOtherActors()} with HAMi's scheduler on a skewed clock as one more writer:
   * for 2 pods in 11 it takes the node lock over before the binder's confirmation ({@link
   * Scenario.LockRemoval#SKEWED_TAKEOVER}; needs a backend with {@code
   * ScenarioBackend#takeOverLockWithSkewedClock}), 2 in 11 see the lock removed before it and 1 in
   * 11 after it.
   */
  public static Gen<Scenario> scenariosWithSkewedWriter() {
    return scenariosWithSkewedWriter(4, 3, 8);
  }

  /**
   * {@link #scenariosWithSkewedWriter()} on smaller clusters, so that hundreds of examples fit a
   * build over HTTP: each example a fresh set of nodes, gangs and client stacks.
   *
   * @param maxNodes 1–4: at most this many nodes (each 1–8 GPUs)
   * @param maxGangs 1–3: at most this many gangs
   * @param maxMembers 2–8: at most this many pods per gang (at least 2)
   * @return scenarios with sidecars, init containers, lock removals and skewed takeovers
   * @throws IllegalArgumentException naming a bound outside its range
   */
  public static Gen<Scenario> scenariosWithSkewedWriter(
      int maxNodes, int maxGangs, int maxMembers) {
    checkArgument(maxNodes >= 1 && maxNodes <= 4, "maxNodes must be 1-4: %s", maxNodes);
    checkArgument(maxGangs >= 1 && maxGangs <= 3, "maxGangs must be 1-3: %s", maxGangs);
    checkArgument(maxMembers >= 2 && maxMembers <= 8, "maxMembers must be 2-8: %s", maxMembers);
    return scenarios(
        true,
        Generate.frequency(
            Pair.of(6, Generate.constant(Scenario.LockRemoval.NONE)),
            Pair.of(2, Generate.constant(Scenario.LockRemoval.BEFORE_CONFIRMATION)),
            Pair.of(1, Generate.constant(Scenario.LockRemoval.AFTER_CONFIRMATION)),
            Pair.of(2, Generate.constant(Scenario.LockRemoval.SKEWED_TAKEOVER))),
        maxNodes,
        maxGangs,
        maxMembers);
  }

  /**
   * {@link #scenariosWithOtherActors()} whose only other writer is HAMi's scheduler on a skewed
   * clock (1 pod in 3: {@link Scenario.LockRemoval#SKEWED_TAKEOVER}), so that what a run shows is
   * that writer's doing.
   */
  public static Gen<Scenario> scenariosWithOnlyTheSkewedWriter() {
    return scenarios(
        true,
        Generate.frequency(
            Pair.of(2, Generate.constant(Scenario.LockRemoval.NONE)),
            Pair.of(1, Generate.constant(Scenario.LockRemoval.SKEWED_TAKEOVER))));
  }

  private static Gen<Scenario> scenarios(boolean otherActors) {
    return scenarios(
        otherActors,
        otherActors
            ? Generate.frequency(
                Pair.of(6, Generate.constant(Scenario.LockRemoval.NONE)),
                Pair.of(2, Generate.constant(Scenario.LockRemoval.BEFORE_CONFIRMATION)),
                Pair.of(1, Generate.constant(Scenario.LockRemoval.AFTER_CONFIRMATION)))
            : Generate.constant(Scenario.LockRemoval.NONE));
  }

  private static Gen<Scenario> scenarios(boolean inits, Gen<Scenario.LockRemoval> removal) {
    return scenarios(inits, removal, 4, 3, 8);
  }

  private static Gen<Scenario> scenarios(
      boolean inits,
      Gen<Scenario.LockRemoval> removal,
      int maxNodes,
      int maxGangs,
      int maxMembers) {
    Gen<List<List<Integer>>> nodes =
        lists().of(lists().of(Gens.cardIndexes()).ofSizeBetween(1, 8)).ofSizeBetween(1, maxNodes);
    Gen<List<List<Shape>>> gangs =
        lists()
            .of(lists().of(shapes(inits, removal)).ofSizeBetween(2, maxMembers))
            .ofSizeBetween(1, maxGangs);
    Gen<Integer> replicas = integers().between(2, 4);
    return nodes.zip(gangs, replicas, ScenarioGens::build);
  }

  static Gen<Shape> shapes(boolean otherActors, Gen<Scenario.LockRemoval> removal) {
    Gen<Scenario.InitContainerSpec> init =
        integers()
            .between(0, 1)
            .zip(
                integers().between(500, 8000),
                integers().between(0, 50),
                (sidecar, mem, cores) ->
                    new Scenario.InitContainerSpec(0, sidecar == 1, mem, cores));
    Gen<List<Scenario.InitContainerSpec>> inits =
        otherActors
            ? Generate.frequency(
                Pair.of(1, Generate.constant(List.<Scenario.InitContainerSpec>of())),
                Pair.of(1, lists().of(init).ofSizeBetween(1, 2)))
            : Generate.constant(List.of());
    Gen<Integer> gpus = integers().between(1, 2);
    Gen<int[]> memory =
        Generate.frequency(
            Pair.of(3, integers().between(500, 20000).map(m -> new int[] {m, 0})),
            Pair.of(1, integers().between(1, 100).map(p -> new int[] {0, p})));
    Gen<Integer> cores = // 0 as often as 100: a 0-core pod beside an exclusive one (issue 23)
        Generate.frequency(
            Pair.of(3, integers().between(0, 100)),
            Pair.of(1, Generate.constant(0)),
            Pair.of(1, Generate.constant(100)));
    Gen<Integer> replicaSeed = integers().between(0, 11);
    Gen<Integer> delay = integers().between(0, 30_000);
    Gen<Boolean> fails =
        Generate.frequency(
            Pair.of(9, Generate.constant(false)), Pair.of(1, Generate.constant(true)));
    Gen<Scenario.BindingFault> fault =
        Generate.frequency(
            Pair.of(22, Generate.constant(Scenario.BindingFault.NONE)),
            Pair.of(1, Generate.constant(Scenario.BindingFault.LOST)),
            Pair.of(1, Generate.constant(Scenario.BindingFault.APPLIED_BUT_TIMED_OUT)),
            Pair.of(1, Generate.constant(Scenario.BindingFault.LANDS_LATE)));
    return in -> {
      int g = gpus.generate(in);
      int[] m = memory.generate(in);
      int c = cores.generate(in);
      int r = replicaSeed.generate(in);
      int d = delay.generate(in);
      boolean f = fails.generate(in);
      Scenario.BindingFault bf = fault.generate(in);
      List<Scenario.InitContainerSpec> is = inits.generate(in);
      Scenario.LockRemoval lr = removal.generate(in);
      return new Shape(g, m[0], m[1], c, r, d, f, bf, is, lr);
    };
  }

  private static List<Scenario.InitContainerSpec> numbered(List<Scenario.InitContainerSpec> in) {
    List<Scenario.InitContainerSpec> out = new ArrayList<>();
    for (int i = 0; i < in.size(); i++) {
      Scenario.InitContainerSpec c = in.get(i);
      out.add(new Scenario.InitContainerSpec(i, c.sidecar(), c.memoryMiB(), c.cores()));
    }
    return out;
  }

  private static Scenario build(
      List<List<Integer>> nodeCards, List<List<Shape>> gangShapes, int replicas) {
    List<Scenario.NodeSpec> nodes = new ArrayList<>();
    for (int n = 0; n < nodeCards.size(); n++) {
      String name = "node-" + n;
      List<Scenario.GpuSpec> gpus = new ArrayList<>();
      for (int g = 0; g < nodeCards.get(n).size(); g++) {
        int card = nodeCards.get(n).get(g);
        String uuid =
            "GPU-" + UUID.nameUUIDFromBytes((name + "/" + g).getBytes(StandardCharsets.UTF_8));
        gpus.add(
            new Scenario.GpuSpec(uuid, Gens.CARD_MEMORY_MIB.get(card), Gens.CARD_TYPES.get(card)));
      }
      nodes.add(new Scenario.NodeSpec(name, gpus));
    }
    List<Scenario.GangSpec> gangs = new ArrayList<>();
    for (int g = 0; g < gangShapes.size(); g++) {
      List<Scenario.PodSpec> members = new ArrayList<>();
      for (int m = 0; m < gangShapes.get(g).size(); m++) {
        Shape s = gangShapes.get(g).get(m);
        members.add(
            new Scenario.PodSpec(
                "g" + g + "-p" + m,
                s.gpus,
                s.memory,
                s.percentage,
                s.cores,
                s.replicaSeed % replicas,
                s.delayMicros,
                s.fails,
                s.fault,
                false,
                numbered(s.inits),
                s.removal));
      }
      gangs.add(new Scenario.GangSpec("gang-" + g, members));
    }
    return new Scenario(nodes, gangs, replicas);
  }
}
