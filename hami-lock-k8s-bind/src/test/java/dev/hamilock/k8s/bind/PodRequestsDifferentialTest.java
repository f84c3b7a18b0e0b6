package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.device.nvidia.NvidiaAnnotations;
import dev.hamilock.device.nvidia.NvidiaVendor;
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
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.view.KubernetesViews;
import dev.hamilock.testing.generators.Props;
import dev.hamilock.testkit.KubernetesPodRequests;
import dev.hamilock.testkit.RealApiServer;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Pod;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 23 item 4: the sidecar aggregation judged by Kubernetes itself. {@value #DEFAULT_PODS}
 * generated pods (0–4 init containers, each a native sidecar ({@code restartPolicy: Always}), a
 * run-to-completion one, or an explicit {@code Never}/{@code OnFailure}, so sidecars come before,
 * between and after init containers; 1–3 app containers) with limits as HAMi's users write them —
 * {@code nvidia.com/gpu: 1}, {@code nvidia.com/gpumem} (MiB), {@code nvidia.com/gpucores} (%), two
 * other extended resources, cpu and memory — are created on the real kube-apiserver, which defaults
 * their requests from the limits, and listed back. {@link KubernetesPodRequests} (the {@code
 * podrequests} command built from {@code k8s.io/component-helpers} at the control plane's version)
 * computes Kubernetes' {@code PodRequests} (overhead excluded) of each stored pod, and the
 * functions the scheduler calls must agree with it, on the views both readers make of the stored
 * pod ({@link JsonViews} for the extender, {@link KubernetesViews} for the binder):
 *
 * <ul>
 *   <li>the fit ({@link PodFitter#fit}): on a one-card node (registration of {@value #SLOTS} slots,
 *       memory M MiB, 100 % cores) already carrying a Running pod's allocation (through {@link
 *       UsageReconstructor#nodeUsage}), the pod fits iff its {@code PodRequests} gpumem and
 *       gpucores are at most the card's free memory and cores. M and the other pod's cores are
 *       chosen per pod around that boundary (equal, above, below in either dimension), so both
 *       outcomes occur;
 *   <li>usage reconstruction ({@link UsageReconstructor#podUsage}, {@link
 *       UsageReconstructor#nodeUsage}): the pod, Running with the allocation the fit chose (codec
 *       {@link PodDevicesCodec}) on a card whose free memory and cores equal its {@code
 *       PodRequests}, counts exactly {@code PodRequests} (gpumem MiB, gpucores %, nvidia.com/gpu
 *       slots) and fills the card exactly.
 * </ul>
 *
 * {@link #theOldAggregationDisagreesWithKubernetes()} runs the same comparison with every init
 * container seen as run-to-completion (the aggregation before issue 23) and requires disagreements
 * in both. The seed is {@code -Dhamilock.seed} (else the clock) and is in every message; the pod
 * count {@code -Dhamilock.podrequests.pods}. Figures go to the log.
 */
@Tag("real-apiserver")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PodRequestsDifferentialTest {
  private static final Logger LOG = LoggerFactory.getLogger(PodRequestsDifferentialTest.class);
  static final int DEFAULT_PODS = 2000;
  static final int SLOTS = 16;
  static final String NS = "default";
  static final String GPU = "nvidia.com/gpu";
  static final String MEM = "nvidia.com/gpumem";
  static final String CORES = "nvidia.com/gpucores";
  static final List<String> OTHER_EXTENDED = List.of("example.com/fpga", "rdma/hca_shared_a");
  static final String CARD = "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca";
  static final String LABEL = "hamilock.dev/podrequests";

  static final VendorRegistry REG = VendorRegistry.builder().register(new NvidiaVendor()).build();
  static final PodFitter FITTER = PodFitter.create(REG);
  static final UsageReconstructor USAGE = new UsageReconstructor(REG);

  /** A stored pod, Kubernetes' answer for it, and the views of both readers. */
  record Judged(JsonNode stored, long gpus, long mem, long cores, Map<String, PodView> views) {
    String describe() {
      StringBuilder b = new StringBuilder(stored.path("metadata").path("name").asText());
      b.append(" init");
      stored.path("spec").path("initContainers").forEach(c -> b.append(' ').append(text(c)));
      b.append(" app");
      stored.path("spec").path("containers").forEach(c -> b.append(' ').append(text(c)));
      return b.append(String.format(" PodRequests gpu %d, %d MiB, %d %%", gpus, mem, cores))
          .toString();
    }

    private static String text(JsonNode c) {
      JsonNode r = c.path("resources").path("requests");
      return c.path("restartPolicy").asText("-")
          + "{"
          + r.path(GPU).asText("0")
          + ","
          + r.path(MEM).asText("0")
          + ","
          + r.path(CORES).asText("0")
          + "}";
    }
  }

  /** How the code under test sees a stored pod's init containers. */
  enum Aggregation {
    /** As stored: {@code restartPolicy: Always} makes a sidecar. */
    KUBERNETES(UnaryOperator.identity()),
    /** Before issue 23: every init container run-to-completion. */
    OLD(
        p ->
            p.toBuilder()
                .initContainers(
                    p.initContainers().stream().map(c -> c.withRestartPolicy(null)).toList())
                .build());

    final UnaryOperator<PodView> view;

    Aggregation(UnaryOperator<PodView> view) {
      this.view = view;
    }
  }

  private final long seed = Long.getLong(Props.SEED_PROPERTY, System.nanoTime());
  private final int count = Integer.getInteger("hamilock.podrequests.pods", DEFAULT_PODS);
  private RealApiServer k8s;
  private KubernetesPodRequests judge;
  private List<Judged> pods;

  @BeforeAll
  void createJudgeAndRead() throws Exception {
    judge = KubernetesPodRequests.locate();
    k8s = RealApiServer.builder().clientReadTimeout(Duration.ofSeconds(30)).start();
    long t0 = System.nanoTime();
    Random r = new Random(seed);
    List<ObjectNode> generated = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      generated.add(pod(String.format(Locale.ROOT, "pr-%05d", i), r));
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<JsonNode>> created = new ArrayList<>();
      for (ObjectNode p : generated) {
        created.add(pool.submit(() -> k8s.create(p)));
      }
      for (Future<JsonNode> f : created) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    long t1 = System.nanoTime();
    List<JsonNode> stored =
        k8s.list("pods", NS).stream()
            .filter(p -> p.path("metadata").path("labels").has(LABEL))
            .sorted(Comparator.comparing(p -> p.path("metadata").path("name").asText()))
            .toList();
    assertThat(stored).as("pods read back").hasSize(count);
    List<Map<String, BigDecimal>> answers = judge.requests(stored);
    long t2 = System.nanoTime();
    pods = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      JsonNode s = stored.get(i);
      Map<String, BigDecimal> a = answers.get(i);
      pods.add(
          new Judged(
              s,
              amount(a, GPU),
              amount(a, MEM),
              amount(a, CORES),
              Map.of(
                  "JsonViews",
                  JsonViews.podView(s),
                  "KubernetesViews",
                  KubernetesViews.podView(JSON.deserialize(s.toString(), V1Pod.class)))));
    }
    LOG.info(
        "seed {}: {} pods created in {} ms (8 at once), listed back and judged by podrequests"
            + " (k8s.io/component-helpers {}) in {} ms",
        seed,
        count,
        (t1 - t0) / 1_000_000,
        judge.componentHelpersVersion(),
        (t2 - t1) / 1_000_000);
  }

  @AfterAll
  void stop() {
    if (k8s != null) {
      k8s.close();
    }
  }

  private static long amount(Map<String, BigDecimal> requests, String resource) {
    return requests.getOrDefault(resource, BigDecimal.ZERO).longValueExact();
  }

  // ----------------------------------------------------------------------------- generation

  /** A pod as a user writes it: limits only for the extended resources. */
  static ObjectNode pod(String name, Random r) {
    ObjectNode pod = JsonNodeFactory.instance.objectNode();
    pod.put("apiVersion", "v1").put("kind", "Pod");
    ObjectNode meta = pod.putObject("metadata");
    meta.put("name", name).put("namespace", NS);
    meta.putObject("labels").put(LABEL, "true");
    ObjectNode spec = pod.putObject("spec");
    int init = r.nextInt(5);
    for (int i = 0; i < init; i++) {
      ObjectNode c = container("init-" + i, r);
      String policy = List.of("", "", "Always", "Always", "Never", "OnFailure").get(r.nextInt(6));
      if (!policy.isEmpty()) {
        c.put("restartPolicy", policy);
      }
      spec.withArray("initContainers").add(c);
    }
    int app = 1 + r.nextInt(3);
    for (int i = 0; i < app; i++) {
      spec.withArray("containers").add(container("app-" + i, r));
    }
    return pod;
  }

  /**
   * Three in five containers ask one card: gpumem 500–8000 MiB (as a user writes it: an integer,
   * sometimes with a k suffix), gpucores 5–40 % (never 0 or 100, whose special rules in HAMi's fit
   * — a card at 100 % refuses a 0 % container, 100 % is exclusive — are not amounts).
   */
  static ObjectNode container(String name, Random r) {
    ObjectNode c = JsonNodeFactory.instance.objectNode();
    c.put("name", name).put("image", "busybox");
    ObjectNode res = c.putObject("resources");
    ObjectNode limits = res.putObject("limits");
    if (r.nextInt(5) < 3) {
      int mem = 500 * (1 + r.nextInt(16));
      limits.put(GPU, "1");
      limits.put(MEM, mem % 1000 == 0 && r.nextBoolean() ? mem / 1000 + "k" : "" + mem);
      limits.put(CORES, "" + 5 * (1 + r.nextInt(8)));
    }
    for (String other : OTHER_EXTENDED) {
      if (r.nextInt(4) == 0) {
        limits.put(other, "" + (1 + r.nextInt(2)));
      }
    }
    if (r.nextBoolean()) {
      limits
          .put("cpu", (100 * (1 + r.nextInt(10))) + "m")
          .put("memory", (64 << r.nextInt(4)) + "Mi");
      if (r.nextBoolean()) {
        res.putObject("requests").put("cpu", "50m").put("memory", "32Mi");
      }
    }
    return c;
  }

  // ----------------------------------------------------------------------------- the node

  /** One card of {@code memory} MiB and 100 % cores, with a Running pod using some of it. */
  static NodeUsage node(long memory, int usedMem, int usedCores, List<PodView> running) {
    NodeView n =
        NodeView.of(
            "n",
            Map.of(
                NvidiaAnnotations.REGISTER,
                CARD + "," + SLOTS + "," + memory + ",100,NVIDIA-Tesla T4,0,true:"));
    List<PodView> pods = new ArrayList<>(running);
    pods.add(running(other(), List.of(List.of(dev(usedMem, usedCores)))));
    return USAGE.nodeUsage(n, pods);
  }

  static PodView other() {
    return PodView.builder(NS, "other").uid("other-uid").build();
  }

  static ContainerDevice dev(int mem, int cores) {
    return new ContainerDevice(0, CARD, "NVIDIA", mem, cores, 0);
  }

  /** {@code pod} after its Filter and Binding: Running on {@code n} with its allocation. */
  static PodView running(PodView pod, List<List<ContainerDevice>> nvidia) {
    return pod.toBuilder()
        .phase(PodView.Phase.RUNNING)
        .nodeName("n")
        .annotations(
            Map.of(
                HamiAnnotations.VGPU_NODE,
                "n",
                NvidiaAnnotations.ALLOCATED,
                PodDevicesCodec.encode(nvidia)))
        .build();
  }

  // ----------------------------------------------------------------------------- the checks

  /** Outcomes of one comparison over all pods and both views. */
  record Outcome(int fits, int refused, int usageChecked, List<String> disagreements) {}

  /**
   * The fit on a card sized around the pod's {@code PodRequests}: free memory and cores equal,
   * above or below it (per pod, from the seed).
   */
  Outcome fitAgainstKubernetes(Aggregation agg) throws Exception {
    int fits = 0;
    int refused = 0;
    List<String> bad = new ArrayList<>();
    for (int i = 0; i < pods.size(); i++) {
      Judged j = pods.get(i);
      Random r = new Random(seed * 31 + i);
      int kind = r.nextInt(5); // 0 exact, 1 room, 2 memory short, 3 cores short, 4 both short
      long memSlack =
          kind == 0 ? 0 : kind == 2 || kind == 4 ? -1 - r.nextInt(1000) : r.nextInt(2000);
      long coreSlack = kind == 0 ? 0 : kind == 3 || kind == 4 ? -1 - r.nextInt(10) : r.nextInt(20);
      long freeMem = Math.max(0, j.mem() + memSlack);
      int freeCores = (int) Math.min(100, Math.max(0, j.cores() + coreSlack));
      int usedMem = 1 + r.nextInt(4000);
      boolean expected = j.mem() <= freeMem && j.cores() <= freeCores && j.gpus() < SLOTS;
      NodeUsage node = node(usedMem + freeMem, usedMem, 100 - freeCores, List.of());
      for (Map.Entry<String, PodView> v : j.views().entrySet()) {
        NodeFit f = FITTER.fit(agg.view.apply(v.getValue()), node);
        if (f.fits() != expected) {
          bad.add(
              String.format(
                  "%s (%s): free %d MiB, %d %%: fits %s, PodRequests says %s (%s)",
                  j.describe(), v.getKey(), freeMem, freeCores, f.fits(), expected, f.reason()));
        }
      }
      if (expected) {
        fits++;
      } else {
        refused++;
      }
    }
    return new Outcome(fits, refused, 0, bad);
  }

  /**
   * The pod Running with the allocation the fit chose on a card whose free memory and cores equal
   * its {@code PodRequests}: its usage is {@code PodRequests} and the card is exactly full.
   */
  Outcome usageAgainstKubernetes(Aggregation agg) throws Exception {
    int checked = 0;
    List<String> bad = new ArrayList<>();
    for (int i = 0; i < pods.size(); i++) {
      Judged j = pods.get(i);
      if (j.cores() > 100 || j.gpus() >= SLOTS) {
        continue; // fits no card of 100 %: nothing to run
      }
      checked++;
      int usedMem = 1 + new Random(seed * 31 + i).nextInt(4000);
      int usedCores = (int) (100 - j.cores());
      long total = usedMem + j.mem();
      NodeUsage node = node(total, usedMem, usedCores, List.of());
      for (Map.Entry<String, PodView> v : j.views().entrySet()) {
        NodeFit f = FITTER.fit(v.getValue(), node);
        if (!f.fits()) {
          bad.add(
              j.describe()
                  + " ("
                  + v.getKey()
                  + "): refused by a card with free == PodRequests: "
                  + f.reason());
          continue;
        }
        PodView run = agg.view.apply(running(v.getValue(), f.devices().forVendor("NVIDIA")));
        PodUsage u = USAGE.podUsage(run).orElseThrow();
        List<String> expected =
            j.gpus() == 0
                ? List.of()
                : List.of(CARD + " " + j.mem() + " MiB " + j.cores() + " % " + j.gpus() + " slots");
        List<String> got =
            u.devices().stream()
                .map(
                    d ->
                        d.uuid()
                            + " "
                            + d.usedmem()
                            + " MiB "
                            + d.usedcores()
                            + " % "
                            + d.slots()
                            + " slots")
                .toList();
        DeviceUsage card = node(total, usedMem, usedCores, List.of(run)).devices().get(0);
        String full =
            card.usedmem()
                + "/"
                + card.totalmem()
                + " MiB "
                + card.usedcores()
                + "/"
                + card.totalcore()
                + " % "
                + card.used()
                + " slots";
        String expectedFull = total + "/" + total + " MiB 100/100 % " + (1 + j.gpus()) + " slots";
        if (!got.equals(expected) || !full.equals(expectedFull)) {
          bad.add(
              String.format(
                  "%s (%s): reconstructed %s, PodRequests %s; card %s, expected %s",
                  j.describe(), v.getKey(), got, expected, full, expectedFull));
        }
      }
    }
    return new Outcome(0, 0, checked, bad);
  }

  // ----------------------------------------------------------------------------- the tests

  @Test
  void theJudgeIsAtTheControlPlanesVersion() {
    assertThat(k8s.kubernetesVersion()).startsWith("v1.");
    assertThat(judge.componentHelpersVersion())
        .as("k8s.io/component-helpers of podrequests vs kube-apiserver %s", k8s.kubernetesVersion())
        .isEqualTo("v0." + k8s.kubernetesVersion().substring("v1.".length()));
  }

  /**
   * The server defaulted each extended resource's request from its limit (what the judge and the
   * readers see), and the generated pods cover sidecars before, between and after init containers.
   */
  @Test
  void theServerDefaultedRequestsAndThePodsCoverEverySidecarPosition() {
    int[] positions = new int[3]; // before / between / after run-to-completion init containers
    for (Judged j : pods) {
      for (JsonNode c : iterable(j.stored())) {
        JsonNode res = c.path("resources");
        for (String rn : List.of(GPU, MEM, CORES, OTHER_EXTENDED.get(0), OTHER_EXTENDED.get(1))) {
          assertThat(res.path("requests").path(rn).asText(""))
              .as(
                  "%s request of %s in %s (seed %d)",
                  rn, c.path("name").asText(), j.describe(), seed)
              .isEqualTo(res.path("limits").path(rn).asText(""));
        }
      }
      List<Boolean> sidecar = new ArrayList<>();
      j.stored()
          .path("spec")
          .path("initContainers")
          .forEach(c -> sidecar.add("Always".equals(c.path("restartPolicy").asText())));
      int first = sidecar.indexOf(false);
      int last = sidecar.lastIndexOf(false);
      for (int k = 0; k < sidecar.size(); k++) {
        if (sidecar.get(k) && first >= 0) {
          positions[k < first ? 0 : k > last ? 2 : 1]++;
        }
      }
    }
    assertThat(Arrays.stream(positions).boxed().toList())
        .as("sidecars before, between, after init containers (seed %d)", seed)
        .allMatch(n -> n >= count / 40);
  }

  private static List<JsonNode> iterable(JsonNode pod) {
    List<JsonNode> out = new ArrayList<>();
    pod.path("spec").path("initContainers").forEach(out::add);
    pod.path("spec").path("containers").forEach(out::add);
    return out;
  }

  @Test
  void onOneCardThePodFitsIffItsPodRequestsFit() throws Exception {
    Outcome o = fitAgainstKubernetes(Aggregation.KUBERNETES);
    LOG.info(
        "seed {}: the fit compared with PodRequests on {} pods × 2 views ({} fit, {} refused by it)",
        seed,
        count,
        o.fits(),
        o.refused());
    assertThat(o.disagreements()).as("seed %d", seed).isEmpty();
    assertThat(List.of(o.fits(), o.refused()))
        .as("fits, refused (seed %d)", seed)
        .allMatch(n -> n >= count / 5);
  }

  @Test
  void aRunningPodsReconstructedUsageIsItsPodRequests() throws Exception {
    Outcome o = usageAgainstKubernetes(Aggregation.KUBERNETES);
    LOG.info(
        "seed {}: reconstructed usage compared with PodRequests on {} pods × 2 views (the others ask"
            + " more than 100 % cores)",
        seed, o.usageChecked());
    assertThat(o.disagreements()).as("seed %d", seed).isEmpty();
    assertThat(o.usageChecked())
        .as("pods checked (seed %d)", seed)
        .isGreaterThanOrEqualTo(count * 9 / 10);
  }

  /** The aggregation before issue 23 (every init container run-to-completion) fails both checks. */
  @Test
  void theOldAggregationDisagreesWithKubernetes() throws Exception {
    Function<Outcome, Integer> n = o -> o.disagreements().size();
    Outcome fit = fitAgainstKubernetes(Aggregation.OLD);
    Outcome usage = usageAgainstKubernetes(Aggregation.OLD);
    LOG.info(
        "seed {}: the old aggregation disagrees with PodRequests on {} fits and {} usages of {} pods"
            + " × 2 views; first: {}",
        seed,
        n.apply(fit),
        n.apply(usage),
        count,
        fit.disagreements().isEmpty() ? "-" : fit.disagreements().get(0));
    assertThat(fit.disagreements()).as("fit, seed %d", seed).isNotEmpty();
    assertThat(usage.disagreements()).as("usage, seed %d", seed).isNotEmpty();
    assertThat(fit.disagreements()).allMatch(s -> s.contains("Always"));
  }
}
