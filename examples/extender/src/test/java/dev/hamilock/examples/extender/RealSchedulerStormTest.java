package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.extender.ExtenderConfig;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.RealApiServer;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.CoreV1Event;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25 item 3, the storm of gangs on the real control plane: kube-apiserver and kube-scheduler
 * v1.37.2 ({@code realcluster --with-scheduler}, kube-scheduler's own gang scheduling as in {@link
 * RealSchedulerGangTest}), N GPU nodes of two A40 cards each, N gangs of 8 members (PodGroup {@code
 * gang.minCount: 8}) and 2N plain pods, each 1 GPU / 3000 MiB / 10 % of a card, all created at once
 * (eight client threads): N = 10 in CI (two storms of 120 pods fit CI's budget on the shared 2-core
 * machine; 20 took 2 and 3.3 minutes there under load), {@code -Dhamilock.storm.gangs=20} for the
 * issue's storm. Two kube-scheduler processes run (the second a child process of the launcher, a
 * second {@code --with-scheduler}), each with its own {@code schedulerName} and its own runnable
 * extender (extenders are configured per scheduler, not per profile); both extenders share the
 * nodes and HAMi's node lock. The storm runs once on one scheduler and once split over both (gangs
 * and plain pods alternate).
 *
 * <p>Asserted: every pod Running, bound by the scheduler it names (its {@code Scheduled} event's
 * reporting component) through that scheduler's extender ({@code bind-phase: success}, {@code
 * vgpu-node} its node) and handed off by its node's simulated device plugin; no card over-committed
 * by the doctor's audit rule ({@link UsageReconstructor#clusterUsage} and {@code
 * DeviceUsage.overCommit()}); no node lock left; a generous cap of {@link #CAP} as the only time
 * assertion. Printed, not asserted: the storm's time to all bound and all Running, the JVM's peak
 * live platform threads (both extenders run in this JVM) and each extender's {@code /healthz}
 * p50/p99 polled every 50 ms during the storm. {@code -Dhamilock.storm.rounds=N} repeats each storm
 * N times (the benchmark, SCHEDULER.md).
 *
 * <p>Needs {@code testing/realcluster/build}; runs with {@code mvn -B verify -Preal-apiserver}.
 */
@Tag("real-apiserver")
class RealSchedulerStormTest {
  static final List<String> SCHEDULERS = List.of("hami-scheduler", "hami-scheduler-2");
  static final String NS = "default";

  /** Gangs of 8 (and as many nodes, twice as many plain pods): 20 for the issue's storm. */
  static final int GANGS = Integer.getInteger("hamilock.storm.gangs", 10);

  static final int NODES = GANGS;
  static final int MEMBERS = 8;
  static final int PLAIN = 2 * GANGS;
  static final Duration CAP = Duration.ofSeconds(240);
  static final int ROUNDS = Integer.getInteger("hamilock.storm.rounds", 1);

  @TempDir static Path tmp;
  static RealApiServer k8s;
  static final List<RunningExtender> EXTENDERS = new ArrayList<>();
  static final List<String> NODE_NAMES = new ArrayList<>();
  static int threadsBeforeExtenders;
  static int runs;

  @BeforeAll
  static void start() throws Exception {
    RealApiServer.Builder b =
        RealApiServer.builder()
            .featureGates("GenericWorkload=true")
            .runtimeConfig("scheduling.k8s.io/v1beta1=true")
            .clientReadTimeout(Duration.ofSeconds(30));
    List<Integer> ports = new ArrayList<>();
    for (String scheduler : SCHEDULERS) {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      ports.add(port);
      Path config = tmp.resolve(scheduler + ".yaml");
      Files.writeString(
          config,
          RealSchedulerGangTest.schedulerConfiguration(scheduler, "http://127.0.0.1:" + port));
      b.withScheduler(config);
    }
    k8s = b.start();
    for (int n = 1; n <= NODES; n++) {
      String name = String.format(Locale.ROOT, "storm-%02d", n);
      NODE_NAMES.add(name);
      RealSchedulerGangTest.createNode(
          k8s,
          name,
          String.format(
              Locale.ROOT,
              "GPU-storm-%02d-0,10,46068,100,NVIDIA-NVIDIA A40,0,true:"
                  + "GPU-storm-%02d-1,10,46068,100,NVIDIA-NVIDIA A40,0,true:",
              n,
              n),
          20);
    }
    threadsBeforeExtenders = ManagementFactory.getThreadMXBean().getThreadCount();
    for (int i = 0; i < SCHEDULERS.size(); i++) {
      EXTENDERS.add(
          RunningExtender.start(
              ExtenderConfig.parse(
                  "--bind-address=127.0.0.1",
                  "--port=" + ports.get(i),
                  "--node-lock-retry-timeout=28s",
                  "--scheduler-name=" + SCHEDULERS.get(i)),
              k8s.newApiClient(Duration.ofSeconds(30)),
              k8s.newApiClient(Duration.ZERO), // the informers' watches: no read timeout
              VendorRegistry.discover(),
              false));
    }
    RealSchedulerGangTest.awaitTrue(
        () -> EXTENDERS.stream().allMatch(RunningExtender::ready),
        Duration.ofSeconds(60),
        "both extenders' watches synced");
  }

  @AfterAll
  static void stop() {
    EXTENDERS.forEach(RunningExtender::close);
    if (k8s != null) {
      k8s.close();
    }
  }

  /**
   * Not asserted but printed: gang members past the retry timeout. Measured 2026-12-02 on the
   * shared 2-core machine: none with 20 gangs at load 20-22; 5 members' waits ended at the 28 s
   * retry timeout and 1 bind at the 30 s deadline with 10 gangs at load 25.6 (kube-scheduler
   * retried them; all Running): under that load each hand-off takes seconds, and a node's queue of
   * members outlasts 28 s. So the issue's "no member past the retry timeout" holds only on a
   * machine that is not overloaded, and is a figure here, not an assertion.
   */
  @Test
  void gangsOfEightAndPlainPodsOnOneRealSchedulerAllRunAndOverCommitNoCard() throws Exception {
    for (int r = 0; r < ROUNDS; r++) {
      storm(1);
    }
  }

  /**
   * Both schedulers' pods Running, no card over-committed. Printed, as above: members past the
   * retry timeout. Measured 2026-12-02: with 20 gangs at load 20-23, 62 gang members' waits ended
   * at the 28 s retry timeout and 8 binds at the 30 s deadline; with 10 gangs at load 35.6, 49 and
   * 44 (kube-scheduler retried them; all Running); on one scheduler at similar loads 0 and 5. Two
   * extenders' waiters on one node are woken each by its own process's release queue, so one
   * process's members can keep taking the lock from the other's (issue 25 item 4, several
   * schedulers on one node, is open).
   */
  @Test
  void theStormSplitOverTwoKubeSchedulersEachWithItsOwnExtenderOverCommitsNoCard()
      throws Exception {
    for (int r = 0; r < ROUNDS; r++) {
      storm(2);
    }
  }

  private static long deadlines() {
    return (long)
        EXTENDERS.stream()
            .mapToDouble(
                e ->
                    e
                        .meters()
                        .find("hami.extender.requests")
                        .tag("verb", "bind")
                        .tag("outcome", "deadline")
                        .timers()
                        .stream()
                        .mapToDouble(t -> t.count())
                        .sum())
            .sum();
  }

  /** One storm over the first {@code schedulers} schedulers; asserts, prints figures, cleans up. */
  private void storm(int schedulers) throws Exception {
    long deadlinesBefore = deadlines();
    String tag = "s" + (++runs);
    Map<String, String> schedulerOf = new HashMap<>(); // pod -> its schedulerName
    List<Map<String, Object>> objects = new ArrayList<>();
    for (int g = 0; g < GANGS; g++) {
      String group = tag + "-gang-" + g;
      String scheduler = SCHEDULERS.get(g % schedulers);
      k8s.createPodGroup(NS, group, MEMBERS, Map.of());
      for (int m = 0; m < MEMBERS; m++) {
        String name = group + "-" + m;
        schedulerOf.put(name, scheduler);
        objects.add(pod(name, scheduler, group));
      }
    }
    for (int p = 0; p < PLAIN; p++) {
      String name = tag + "-plain-" + p;
      String scheduler = SCHEDULERS.get(p % schedulers);
      schedulerOf.put(name, scheduler);
      objects.add(pod(name, scheduler, null));
    }
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    int threadsAtStart = mx.getThreadCount();
    mx.resetPeakThreadCount();
    ExecutorService creators = Executors.newFixedThreadPool(8);
    long t0;
    long boundAt = -1;
    long runningAt = -1;
    try (DevicePlugins plugins = new DevicePlugins();
        HealthPoller health = new HealthPoller()) {
      t0 = System.nanoTime();
      List<java.util.concurrent.Future<JsonNode>> created = new ArrayList<>();
      objects.forEach(o -> created.add(creators.submit(() -> k8s.create(o))));
      for (var f : created) {
        f.get(60, TimeUnit.SECONDS);
      }
      long deadline = t0 + CAP.toNanos();
      while (System.nanoTime() < deadline) {
        List<JsonNode> pods = stormPods(tag);
        if (boundAt < 0
            && pods.stream().allMatch(p -> !p.at("/spec/nodeName").asText().isEmpty())) {
          boundAt = System.nanoTime();
        }
        if (pods.size() == objects.size()
            && pods.stream().allMatch(p -> p.at("/status/phase").asText().equals("Running"))) {
          runningAt = System.nanoTime();
          break;
        }
        Thread.sleep(100);
      }
      int peak = mx.getPeakThreadCount();
      List<JsonNode> pods = stormPods(tag);
      Map<String, String> scheduledBy = new HashMap<>();
      List<String> gangTimeouts = new ArrayList<>();
      long failed = events(tag, schedulerOf, scheduledBy, gangTimeouts);
      long deadlines = deadlines() - deadlinesBefore;
      System.out.printf(
          Locale.ROOT,
          "real-scheduler storm %s (%d gangs of %d + %d plain on %d nodes, %d scheduler(s), load"
              + " %.1f): all bound %d ms, all Running %d ms; peak live threads %d (%d before the"
              + " extenders started, %d at the storm's start); /healthz %s; gang members past the"
              + " retry timeout %d, binds at the deadline %d, failed-bind and lock-timeout events"
              + " %d%n",
          tag,
          GANGS,
          MEMBERS,
          PLAIN,
          NODES,
          schedulers,
          ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
          boundAt < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(boundAt - t0),
          runningAt < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(runningAt - t0),
          peak,
          threadsBeforeExtenders,
          threadsAtStart,
          health.summary(),
          gangTimeouts.size(),
          deadlines,
          failed);
      assertThat(runningAt)
          .as(
              "every pod Running within %s; not yet: %s",
              CAP,
              pods.stream()
                  .filter(p -> !p.at("/status/phase").asText().equals("Running"))
                  .map(
                      p ->
                          p.at("/metadata/name").asText()
                              + "@"
                              + p.at("/spec/nodeName").asText("-")
                              + " "
                              + p.at("/metadata/annotations/hami.io~1bind-phase").asText("-"))
                  .limit(20)
                  .toList())
          .isPositive();
      assertThat(plugins.errors).as("device plugin errors").isEmpty();
      for (JsonNode p : pods) {
        String name = p.at("/metadata/name").asText();
        JsonNode ann = p.at("/metadata/annotations");
        assertThat(ann.path("hami.io/bind-phase").asText()).as(name).isEqualTo("success");
        assertThat(ann.path("hami.io/vgpu-node").asText())
            .as(name)
            .isEqualTo(p.at("/spec/nodeName").asText());
        assertThat(plugins.served).as("handed off by its device plugin").contains(name);
      }
      List<String> overCommitted = new ArrayList<>();
      List<NodeView> nodeViews = new ArrayList<>();
      for (String n : NODE_NAMES) {
        nodeViews.add(JsonViews.nodeView(k8s.get("nodes", null, n).orElseThrow()));
      }
      List<PodView> podViews = new ArrayList<>();
      for (JsonNode p : pods) {
        podViews.add(JsonViews.podView(p));
      }
      new UsageReconstructor(VendorRegistry.discover())
          .clusterUsage(nodeViews, podViews)
          .forEach(
              (node, usage) ->
                  usage.devices().stream()
                      .filter(d -> !d.overCommit().isEmpty())
                      .forEach(d -> overCommitted.add(node + "/" + d.id() + " " + d.overCommit())));
      assertThat(overCommitted).as("cards the audit finds over-committed").isEmpty();
      // kube-scheduler records Scheduled per profile, under its schedulerName
      assertThat(schedulerOf)
          .as("the scheduler of each pod's Scheduled event")
          .containsAllEntriesOf(scheduledBy);
      assertThat(Set.copyOf(scheduledBy.values()))
          .as("schedulers that bound pods")
          .isEqualTo(Set.copyOf(SCHEDULERS.subList(0, schedulers)));
      RealSchedulerGangTest.awaitTrue(
          () -> NODE_NAMES.stream().allMatch(n -> RealSchedulerGangTest.lock(k8s, n).isEmpty()),
          Duration.ofSeconds(10),
          "no node lock left");
    } finally {
      creators.shutdownNow();
      for (String p : schedulerOf.keySet()) {
        k8s.delete("pods", NS, p);
      }
      for (int g = 0; g < GANGS; g++) {
        new CustomObjectsApi(k8s.apiClient())
            .deleteNamespacedCustomObject(
                "scheduling.k8s.io", "v1beta1", NS, "podgroups", tag + "-gang-" + g)
            .execute();
      }
    }
  }

  /**
   * Reads the storm's events: each pod's {@code Scheduled} event's reporting component into {@code
   * scheduledBy} (waiting up to 10 s for them; under load the events broadcaster may drop some),
   * the gang members with a {@code NodeLockWaitTimedOut} event (a wait that reached the retry
   * timeout; plain pods fail fast after one attempt, as HAMi's) into {@code gangTimeouts}.
   *
   * @return the number of {@code NodeLockWaitTimedOut} and {@code BindFailed} events
   */
  private static long events(
      String tag,
      Map<String, String> schedulerOf,
      Map<String, String> scheduledBy,
      List<String> gangTimeouts)
      throws Exception {
    long[] failed = {0};
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    do {
      scheduledBy.clear();
      gangTimeouts.clear();
      failed[0] = 0;
      for (CoreV1Event e :
          new CoreV1Api(k8s.apiClient()).listNamespacedEvent(NS).execute().getItems()) {
        String pod = e.getInvolvedObject().getName();
        if (!schedulerOf.containsKey(pod)) {
          continue;
        }
        String reason = String.valueOf(e.getReason());
        if (reason.equals("Scheduled")) {
          scheduledBy.put(pod, e.getReportingComponent());
        } else if (reason.equals("NodeLockWaitTimedOut") || reason.equals("BindFailed")) {
          failed[0]++;
          if (reason.equals("NodeLockWaitTimedOut") && pod.startsWith(tag + "-gang-")) {
            gangTimeouts.add(pod + ": " + e.getMessage());
          }
        }
      }
    } while (scheduledBy.size() < schedulerOf.size() && System.nanoTime() < end && sleep100());
    return failed[0];
  }

  private static boolean sleep100() throws InterruptedException {
    Thread.sleep(100);
    return true;
  }

  private static List<JsonNode> stormPods(String tag) {
    return k8s.list("pods", NS).stream()
        .filter(p -> p.at("/metadata/name").asText().startsWith(tag + "-"))
        .toList();
  }

  /** A pod of 1 GPU, 3000 MiB, 10 % of a card; a gang member when {@code group} is not null. */
  private static Map<String, Object> pod(String name, String scheduler, String group) {
    Map<String, Object> spec = new HashMap<>();
    spec.put("schedulerName", scheduler);
    spec.put(
        "containers",
        List.of(
            Map.of(
                "name",
                "worker",
                "image",
                "ubuntu:22.04",
                "resources",
                Map.of(
                    "limits",
                    Map.of(
                        "nvidia.com/gpu",
                        "1",
                        "nvidia.com/gpumem",
                        "3000",
                        "nvidia.com/gpucores",
                        "10")))));
    Map<String, Object> metadata = new HashMap<>(Map.of("name", name, "namespace", NS));
    if (group != null) {
      spec.put("schedulingGroup", Map.of("podGroupName", group));
      metadata.put("labels", Map.of("scheduling.x-k8s.io/pod-group", group));
    }
    return Map.of("apiVersion", "v1", "kind", "Pod", "metadata", metadata, "spec", spec);
  }

  /**
   * The 20 nodes' simulated HAMi device plugins, sharing threads: every 20 ms one LIST of the
   * namespace's pods; a pod in bind phase {@code allocating} on a node with no hand-off in progress
   * gets one (on a pool of 4): 20 ms of Allocate, {@code DevicePluginHandoff.allocateAll(node)},
   * then the pod is marked Running through the status subresource, as kubelet would. One LIST for
   * all nodes (not one per node every 10 ms as {@link RealSchedulerGangTest}'s) keeps the harness's
   * load on the 2-core machine small.
   */
  static final class DevicePlugins implements AutoCloseable {
    final Set<String> served = ConcurrentHashMap.newKeySet();
    final List<String> errors = new CopyOnWriteArrayList<>();
    private final Set<String> busy = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final ExecutorService pool = Executors.newFixedThreadPool(4);
    private final KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).watch(false).build();
    private final Thread lister = new Thread(this::loop, "storm-device-plugins");

    DevicePlugins() {
      lister.setDaemon(true);
      lister.start();
    }

    private void loop() {
      while (!stop.get()) {
        try {
          for (JsonNode p : k8s.list("pods", NS)) {
            String node = p.at("/spec/nodeName").asText();
            if (!node.isEmpty()
                && "allocating".equals(p.at("/metadata/annotations/hami.io~1bind-phase").asText())
                && !served.contains(p.at("/metadata/name").asText())
                && busy.add(node)) {
              pool.execute(() -> handOff(node));
            }
          }
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          if (!stop.get()) {
            errors.add("list: " + e);
          }
        }
      }
    }

    private void handOff(String node) {
      try {
        Thread.sleep(20); // Allocate
        HandoffResult r = hami.devicePluginHandoff("NVIDIA").allocateAll(node);
        if (r.status() == HandoffResult.Status.COMPLETED && r.pod().isPresent()) {
          String pod = r.pod().get().name();
          k8s.mutate(
              "pods",
              NS,
              pod,
              o -> {
                o.withObjectProperty("status").put("phase", "Running");
                return o;
              });
          served.add(pod);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        if (!stop.get()) {
          errors.add(node + ": " + e);
        }
      } finally {
        busy.remove(node);
      }
    }

    @Override
    public void close() {
      stop.set(true);
      lister.interrupt();
      pool.shutdownNow();
      try {
        lister.join(10_000);
        pool.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      hami.close();
    }
  }

  /** Polls each extender's {@code /healthz} every 50 ms and keeps the latencies. */
  static final class HealthPoller implements AutoCloseable {
    private final HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final Map<Integer, List<Long>> micros = new ConcurrentHashMap<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread = new Thread(this::loop, "storm-healthz");

    HealthPoller() {
      thread.setDaemon(true);
      thread.start();
    }

    private void loop() {
      while (!stop.get()) {
        for (RunningExtender e : EXTENDERS) {
          long t = System.nanoTime();
          try {
            int code =
                http.send(
                        HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + e.port() + "/healthz"))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                        HttpResponse.BodyHandlers.discarding())
                    .statusCode();
            if (code != 200) {
              failures.add(e.port() + ": " + code);
            }
            micros
                .computeIfAbsent(e.port(), k -> new CopyOnWriteArrayList<>())
                .add(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - t));
          } catch (java.io.IOException ex) {
            failures.add(e.port() + ": " + ex);
          } catch (InterruptedException ex) {
            return;
          }
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException ex) {
          return;
        }
      }
    }

    /** Per extender port: samples, p50 and p99 in ms, and any non-200 answer. */
    String summary() {
      StringBuilder out = new StringBuilder();
      micros.forEach(
          (port, l) -> {
            List<Long> s = l.stream().sorted().toList();
            out.append(
                String.format(
                    Locale.ROOT,
                    "[extender :%d %d samples p50 %.1f ms p99 %.1f ms]",
                    port,
                    s.size(),
                    s.get(s.size() / 2) / 1000.0,
                    s.get(Math.min(s.size() - 1, (int) Math.ceil(s.size() * 0.99) - 1)) / 1000.0));
          });
      return out + (failures.isEmpty() ? "" : " failures " + failures);
    }

    @Override
    public void close() {
      stop.set(true);
      thread.interrupt();
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
