package dev.hamilock.device.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.PodUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Issue 23 fault 2 as a property: for pods with native sidecars before, between and after
 * run-to-completion init containers ({@link Gens#initRestartPolicies}), the fit ({@link
 * PodFitter#fit}) never lets a card's peak over the pod's phases exceed its memory, cores or slots,
 * and usage reconstruction ({@link UsageReconstructor#podUsage}) counts exactly that peak. The
 * phases are Kubernetes' ({@code PodRequests}, {@code k8s.io/component-helpers/resource} v0.37),
 * computed here from the containers' {@code restartPolicy} text, not from the code under test: init
 * phase {@code i} = sidecars declared before {@code i} + init {@code i}; app phase = all sidecars +
 * all app containers. The falsification tests run the same properties against the old aggregation
 * (every init container run-to-completion) and show they fail.
 */
class SidecarPeakProperties {
  static final VendorRegistry REG = VendorRegistry.builder().register(new NvidiaVendor()).build();
  static final PodFitter FITTER = PodFitter.create(REG);
  static final UsageReconstructor USAGE = new UsageReconstructor(REG);

  /** A node and a pod; printed for counterexamples. */
  record Case(List<DeviceUsage> cards, PodView pod) {
    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("cards ");
      cards.forEach(
          d ->
              b.append(
                  String.format(
                      "[%s %d/%d MiB %d/%d%% %d/%d] ",
                      d.id(),
                      d.usedmem(),
                      d.totalmem(),
                      d.usedcores(),
                      d.totalcore(),
                      d.used(),
                      d.count())));
      b.append("init ");
      pod.initContainers().forEach(c -> b.append(text(c)));
      b.append("app ");
      pod.containers().forEach(c -> b.append(text(c)));
      return b.toString();
    }

    private static String text(ContainerView c) {
      return c.restartPolicy().orElse("-") + c.limits() + " ";
    }
  }

  /**
   * A container asking 0..{@code maxGpus} cards of 1000–8000 MiB and 0 or 10 % cores each (the sums
   * stay under 100 %, so HAMi's "cores exhausted" rule never decides).
   */
  static Gen<ContainerView> containers(int maxGpus) {
    Gen<Integer> gpus = integers().between(0, maxGpus);
    Gen<Integer> mem = integers().between(1, 8).map(i -> i * 1000);
    Gen<Integer> cores = Generate.pick(List.of(0, 10));
    return in -> {
      int n = gpus.generate(in);
      int m = mem.generate(in);
      int k = cores.generate(in);
      return Nv.container(
          "c",
          n == 0
              ? Map.of()
              : Map.of(
                  "nvidia.com/gpu",
                  "" + n,
                  "nvidia.com/gpumem",
                  "" + m,
                  "nvidia.com/gpucores",
                  "" + k),
          Map.of());
    };
  }

  /**
   * Pods of 0–4 init containers (sidecars among them) and 1–3 app containers; an app container's
   * own {@code restartPolicy: Always} (ContainerRestartRules) must not make it a sidecar.
   */
  static Gen<PodView> pods(int maxGpus) {
    Gen<ContainerView> c = containers(maxGpus);
    Gen<List<String>> policies = Gens.initRestartPolicies(4);
    Gen<List<ContainerView>> apps = lists().of(c).ofSizeBetween(1, 3);
    Gen<String> appPolicy = Generate.pick(List.of("", "", "Always"));
    return in -> {
      List<ContainerView> init = new ArrayList<>();
      for (String p : policies.generate(in)) {
        init.add(c.generate(in).withRestartPolicy(p));
      }
      List<ContainerView> app = new ArrayList<>();
      for (ContainerView a : apps.generate(in)) {
        app.add(a.withRestartPolicy(appPolicy.generate(in)));
      }
      return PodView.builder("ns", "p").uid("u").initContainers(init).containers(app).build();
    };
  }

  /** 1..{@code max} cards of real sizes, each 0–3 of 10 slots, 0–40 % memory, 0–20 % cores used. */
  static Gen<List<DeviceUsage>> cards(int max) {
    Gen<Integer> mem = Gens.cardMemoryMiB();
    Gen<Integer> used = integers().between(0, 3);
    Gen<Integer> pct = integers().between(0, 40);
    Gen<Integer> cores = integers().between(0, 20);
    Gen<Integer> count = integers().between(1, max);
    return in -> {
      int n = count.generate(in);
      List<DeviceUsage> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int m = mem.generate(in);
        int u = used.generate(in);
        out.add(
            Nv.dev(
                "GPU-" + i,
                i,
                0,
                10,
                u,
                m,
                u == 0 ? 0 : m / 100 * pct.generate(in),
                100,
                u == 0 ? 0 : cores.generate(in)));
      }
      return out;
    };
  }

  static Gen<Case> cases(int maxCards, int maxGpus) {
    Gen<List<DeviceUsage>> cs = cards(maxCards);
    Gen<PodView> ps = pods(maxGpus);
    return in -> new Case(cs.generate(in), ps.generate(in));
  }

  /**
   * Kubernetes' phases: the container indices (allocation order) running together, from the restart
   * policies as written.
   */
  static List<List<Integer>> phases(PodView pod) {
    List<List<Integer>> out = new ArrayList<>();
    List<Integer> sidecars = new ArrayList<>();
    List<ContainerView> init = pod.initContainers();
    for (int i = 0; i < init.size(); i++) {
      if (init.get(i).restartPolicy().equals(Optional.of("Always"))) {
        sidecars.add(i);
      } else {
        List<Integer> phase = new ArrayList<>(sidecars);
        phase.add(i);
        out.add(phase);
      }
    }
    List<Integer> app = new ArrayList<>(sidecars);
    for (int i = 0; i < pod.containers().size(); i++) {
      app.add(init.size() + i);
    }
    out.add(app);
    return out;
  }

  /** {mem, cores, slots} of the pod on card {@code uuid} in one phase. */
  static long[] phaseUse(List<List<ContainerDevice>> nv, List<Integer> phase, String uuid) {
    long[] s = new long[3];
    for (int ci : phase) {
      for (ContainerDevice d : nv.get(ci)) {
        if (d.uuid().equals(uuid)) {
          s[0] += d.usedmem();
          s[1] += d.usedcores();
          s[2]++;
        }
      }
    }
    return s;
  }

  static NodeUsage node(List<DeviceUsage> cards) {
    return NodeUsage.of(NodeView.of("n", Map.of()), cards);
  }

  /** The pod after its Filter: Running on {@code n} with the allocation annotated. */
  static PodView running(PodView pod, List<List<ContainerDevice>> nv) {
    return pod.toBuilder()
        .phase(PodView.Phase.RUNNING)
        .nodeName("n")
        .annotations(
            Map.of(
                HamiAnnotations.VGPU_NODE,
                "n",
                NvidiaAnnotations.ALLOCATED,
                PodDevicesCodec.encode(nv)))
        .build();
  }

  /** The old aggregation: every init container run-to-completion. */
  static PodView withoutSidecars(PodView pod) {
    return pod.toBuilder()
        .initContainers(pod.initContainers().stream().map(c -> c.withRestartPolicy(null)).toList())
        .build();
  }

  /** The fit (of the pod as {@code fitted} sees it) never takes a card past its totals. */
  static void peakFits(Case c, UnaryOperator<PodView> fitted) throws Exception {
    NodeFit f = FITTER.fit(fitted.apply(c.pod()), node(c.cards()));
    if (!f.fits()) {
      return;
    }
    List<List<ContainerDevice>> nv = f.devices().forVendor("NVIDIA");
    if (nv.isEmpty()) {
      return; // no container asks for a card
    }
    for (List<Integer> phase : phases(c.pod())) {
      for (DeviceUsage d : c.cards()) {
        long[] s = phaseUse(nv, phase, d.id());
        assertThat(d.usedmem() + s[0])
            .as("MiB on %s in phase %s", d.id(), phase)
            .isLessThanOrEqualTo(d.totalmem());
        assertThat(d.usedcores() + s[1])
            .as("cores on %s in phase %s", d.id(), phase)
            .isLessThanOrEqualTo(d.totalcore());
        assertThat(d.used() + s[2])
            .as("slots on %s in phase %s", d.id(), phase)
            .isLessThanOrEqualTo(d.count());
      }
    }
  }

  /** Reconstruction (of the pod as {@code read} sees it) counts each card's peak over phases. */
  static void countsThePeak(Case c, UnaryOperator<PodView> read) throws Exception {
    NodeFit f = FITTER.fit(c.pod(), node(c.cards()));
    if (!f.fits()) {
      return;
    }
    List<List<ContainerDevice>> nv = f.devices().forVendor("NVIDIA");
    if (nv.isEmpty()) {
      return; // no container asks for a card
    }
    PodUsage u = USAGE.podUsage(read.apply(running(c.pod(), nv))).orElseThrow();
    for (ContainerDevice got : u.devices()) {
      long[] peak = new long[3];
      for (List<Integer> phase : phases(c.pod())) {
        long[] s = phaseUse(nv, phase, got.uuid());
        for (int k = 0; k < 3; k++) {
          peak[k] = Math.max(peak[k], s[k]);
        }
      }
      assertThat(List.of((long) got.usedmem(), (long) got.usedcores(), (long) got.slots()))
          .as("%s: MiB, cores, slots", got.uuid())
          .containsExactly(peak[0], peak[1], Math.max(peak[2], 1));
    }
  }

  @Test
  void noCardExceedsItsTotalsInAnyPhase() {
    Props.qt(600)
        .forAll(cases(4, 2))
        .checkAssert(c -> Props.unchecked(() -> peakFits(c, UnaryOperator.identity())));
  }

  @Test
  void reconstructionCountsEachCardsPeakOverThePhases() {
    Props.qt(600)
        .forAll(cases(4, 2))
        .checkAssert(c -> Props.unchecked(() -> countsThePeak(c, UnaryOperator.identity())));
  }

  /**
   * On one card with every container asking that card or none: the pod fits iff Kubernetes' {@code
   * PodRequests} (per resource: max of each init phase and the app phase) fits the card's free
   * memory, cores and slots — the rule of {@code AggregateContainerRequests}, written out.
   */
  @Test
  void onOneCardTheFitIsKubernetesPodRequests() {
    Props.qt(600)
        .forAll(cases(1, 1))
        .checkAssert(
            c ->
                Props.unchecked(
                    () -> {
                      DeviceUsage d = c.cards().get(0);
                      long[] req = podRequests(c.pod());
                      boolean expected =
                          d.usedmem() + req[0] <= d.totalmem()
                              && d.usedcores() + req[1] <= d.totalcore()
                              && d.used() + req[2] <= d.count();
                      assertThat(FITTER.fit(c.pod(), node(c.cards())).fits())
                          .as("PodRequests %d MiB, %d %%, %d cards", req[0], req[1], req[2])
                          .isEqualTo(expected);
                    }));
  }

  /**
   * {@code AggregateContainerRequests} over {@code nvidia.com/gpumem × gpu}, {@code gpucores × gpu}
   * and {@code nvidia.com/gpu} (one card: a container's amount is its per-card amount).
   */
  static long[] podRequests(PodView pod) {
    long[] app = new long[3];
    for (ContainerView c : pod.containers()) {
      add(app, c);
    }
    long[] sidecars = new long[3];
    long[] init = new long[3];
    for (ContainerView c : pod.initContainers()) {
      long[] mine = new long[3];
      add(mine, c);
      if ("Always".equals(c.restartPolicy().orElse(""))) {
        for (int k = 0; k < 3; k++) {
          app[k] += mine[k];
          sidecars[k] += mine[k];
          init[k] = Math.max(init[k], sidecars[k]);
        }
      } else {
        for (int k = 0; k < 3; k++) {
          init[k] = Math.max(init[k], mine[k] + sidecars[k]);
        }
      }
    }
    for (int k = 0; k < 3; k++) {
      app[k] = Math.max(app[k], init[k]);
    }
    return app;
  }

  private static void add(long[] into, ContainerView c) {
    long n = c.limitOrRequest("nvidia.com/gpu").map(v -> v.longValueExact()).orElse(0L);
    into[0] += n * c.limitOrRequest("nvidia.com/gpumem").map(v -> v.longValueExact()).orElse(0L);
    into[1] += n * c.limitOrRequest("nvidia.com/gpucores").map(v -> v.longValueExact()).orElse(0L);
    into[2] += n;
  }

  /** A property body over a case and the view of the pod the code under test gets. */
  @FunctionalInterface
  interface Check {
    void run(Case c, UnaryOperator<PodView> view) throws Exception;
  }

  /** The property fails when the code under test sees every init container run-to-completion. */
  static void falsifiedByTheOldAggregation(Check check) {
    Props.Falsified f =
        Props.expectFalsified(
            2000,
            qt ->
                qt.forAll(cases(4, 2))
                    .checkAssert(
                        c ->
                            Props.unchecked(
                                () -> check.run(c, SidecarPeakProperties::withoutSidecars))));
    assertThat(f.example()).contains("Always");
  }

  @Test
  void theOldAggregationOverCommitsACard() {
    falsifiedByTheOldAggregation(SidecarPeakProperties::peakFits);
  }

  @Test
  void theOldAggregationUnderCountsARunningPod() {
    falsifiedByTheOldAggregation(SidecarPeakProperties::countsThePeak);
  }
}
