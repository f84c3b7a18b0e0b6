package dev.hamilock.examples.gang.real;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.RealApiServer;
import dev.hamilock.testkit.RequestKey;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The guide's set-up on a real control plane: kube-apiserver + etcd + kube-scheduler v1.37.2 from
 * {@code testing/realcluster} ({@link RealApiServer}, {@code --with-scheduler}), the runnable
 * extender ({@code examples/extender/target/hami-extender.jar}) started twice as its own process —
 * with the guide's {@code --node-lock-retry-timeout=28s} and with {@code 0} (fail-fast) — and
 * registered the way HAMi's chart registers HAMi's (filter + bind, nodeCacheCapable, weight 1,
 * httpTimeout 30s, plain HTTP, HAMi's resources managed and ignored by the scheduler, scheduler
 * name {@value #SCHEDULER}) behind a forwarding proxy that counts kube-scheduler's calls and points
 * at one of the two.
 *
 * <p>Gangs are released together by kube-scheduler 1.37's own gang scheduling (feature gate {@code
 * GenericWorkload}, a {@code scheduling.k8s.io/v1beta1} PodGroup with {@code
 * schedulingPolicy.gang.minCount}, members naming it in {@code spec.schedulingGroup.podGroupName}
 * and carrying the scheduler-plugins label {@code scheduling.x-k8s.io/pod-group} too). GPU nodes
 * ({@link RealGpuNode}) are created through the API with their HAMi registration and status
 * capacity; each node of a run has a simulated HAMi device plugin (20 ms Allocate, then {@code
 * DevicePluginHandoff} and the pod marked Running through the status subresource).
 */
public final class RealSchedulerCluster implements AutoCloseable {
  /** The scheduler name the pods use and the profile serves. */
  public static final String SCHEDULER = "hami-scheduler";

  static final String NS = "default";
  static final String REGISTER = "hami.io/node-nvidia-register";
  static final String LOCK = "hami.io/mutex.lock";
  static final String HOSTNAME = "kubernetes.io/hostname";

  /**
   * The simulated device plugin's Allocate in ms: the extender modes' device plugin spends it
   * before the hand-off, the floor's kubelet waits it before marking a pod Running.
   */
  public static final long ALLOCATE_MS = 20;

  /**
   * Benchmark knob ({@code -Dhamilock.demo.runningAfterMs}, default 0): how long after its hand-off
   * the simulated device plugin's node marks a pod Running, as a kubelet does once the containers
   * started (seconds on a cluster); 0 marks it at once. A pod write right after each release lets
   * kube-apiserver's pod watch cache catch up at once, which a cluster does not do.
   */
  static final long RUNNING_AFTER_MS = Long.getLong("hamilock.demo.runningAfterMs", 0);

  /**
   * The extended resource the floor's pods ask for, one unit each: every node advertises it as
   * allocatable with the node's HAMi slots (10 per card, the same {@code nvidia.com/gpu} count), so
   * the same pods fit. kube-scheduler's NodeResourcesFit counts it as it would {@code
   * nvidia.com/gpu} from NVIDIA's own device plugin; it is not among the extender's
   * managedResources, so kube-scheduler's HTTPExtender.IsInterested is false and the extender is
   * neither asked to filter nor to bind (k8s.io/kubernetes pkg/scheduler/extender.go).
   */
  public static final String FLOOR_RESOURCE = "hami-lock.dev/floor-gpu";

  /** How long a run may take before it is reported as not converged. */
  static final Duration RUN_TIMEOUT = Duration.ofSeconds(300);

  /** Which gang scheduling releases a gang's members together. */
  public enum Gang {
    /**
     * kube-scheduler 1.37.2's own (in the launcher): {@code scheduling.k8s.io/v1beta1} PodGroup
     * with {@code gang.minCount}, members naming it in {@code spec.schedulingGroup.podGroupName}.
     */
    KUBERNETES_1_37,
    /**
     * scheduler-plugins v0.34.7's Coscheduling (testing/schedplugins' kube-scheduler v1.34.7, its
     * own process, the guide's profile): {@code scheduling.x-k8s.io/v1alpha1} PodGroup with {@code
     * minMember}, members carrying the label {@code scheduling.x-k8s.io/pod-group}.
     */
    COSCHEDULING
  }

  private final RealApiServer k8s;
  final CountingProxy proxy;
  final PodWatch pods;
  private final Gang gang;
  private final Map<ExtenderMode, ExtenderProcess> extenders = new EnumMap<>(ExtenderMode.class);
  private Path extenderJar;
  private Path workDir;
  private Process externalScheduler;
  private int runs;

  private RealSchedulerCluster(RealApiServer k8s, CountingProxy proxy, Gang gang) {
    this.k8s = k8s;
    this.proxy = proxy;
    this.gang = gang;
    this.pods = new PodWatch(k8s.newApiClient(Duration.ofSeconds(10)), NS);
  }

  /**
   * Starts the control plane with the scheduler, the nodes and both extender processes.
   *
   * @param extenderJar the runnable extender jar
   * @param workDir where the scheduler configuration and the extenders' logs go
   * @return the running cluster
   * @throws IOException when a file cannot be written or a process started
   * @throws IllegalStateException when the jar is missing or an extender does not become ready
   */
  public static RealSchedulerCluster start(Path extenderJar, Path workDir) throws IOException {
    if (!Files.isRegularFile(extenderJar)) {
      throw new IllegalStateException(
          "no extender jar at "
              + extenderJar
              + ": build it first (mvn -B -DskipTests package -pl examples/extender -am)");
    }
    Files.createDirectories(workDir);
    CountingProxy proxy = CountingProxy.start();
    Path config = workDir.resolve("scheduler-config.yaml");
    Files.writeString(config, schedulerConfiguration("http://127.0.0.1:" + proxy.port()));
    RealApiServer k8s;
    try {
      k8s =
          RealApiServer.builder()
              .featureGates("GenericWorkload=true")
              .runtimeConfig("scheduling.k8s.io/v1beta1=true")
              .withScheduler(config)
              .clientReadTimeout(Duration.ofSeconds(30))
              .start();
    } catch (RuntimeException e) {
      proxy.close();
      throw e;
    }
    RealSchedulerCluster c = new RealSchedulerCluster(k8s, proxy, Gang.KUBERNETES_1_37);
    c.startNodesAndExtenders(extenderJar, workDir);
    return c;
  }

  private void startNodesAndExtenders(Path extenderJar, Path workDir) throws IOException {
    this.extenderJar = extenderJar;
    this.workDir = workDir;
    try {
      pods.start(Duration.ofSeconds(30));
      RealGpuNode.ALL.values().forEach(this::createNode);
      for (ExtenderMode mode : ExtenderMode.withExtender()) {
        extenders.put(mode, startExtender(mode));
      }
      for (ExtenderProcess e : extenders.values()) {
        e.awaitReady(Duration.ofSeconds(90));
      }
    } catch (RuntimeException | IOException e) {
      close();
      throw e;
    }
  }

  private ExtenderProcess startExtender(ExtenderMode mode) throws IOException {
    return ExtenderProcess.start(
        extenderJar,
        k8s.kubeconfigFile(),
        mode,
        workDir.resolve("extender-" + mode.name().toLowerCase(java.util.Locale.ROOT) + ".log"));
  }

  /**
   * @param mode an extender mode
   * @return its process; one not started with the cluster ({@link ExtenderMode#GPU_PREEMPTION}) is
   *     started on first use and awaited ready
   * @throws IOException when it cannot be started
   * @throws IllegalStateException when it does not become ready within 90 s
   */
  ExtenderProcess extender(ExtenderMode mode) throws IOException {
    ExtenderProcess e = extenders.get(mode);
    if (e == null) {
      e = startExtender(mode);
      extenders.put(mode, e);
      e.awaitReady(Duration.ofSeconds(90));
    }
    return e;
  }

  /**
   * Starts the control plane without the launcher's kube-scheduler and runs the guide's scheduler
   * instead: {@code testing/schedplugins}' kube-scheduler v1.34.7 with scheduler-plugins v0.34.7's
   * Coscheduling, as its own process, with the guide's profile ({@link #guideConfiguration}), as
   * the ServiceAccount {@code hami-system/hami-scheduler} bound to {@code system:kube-scheduler},
   * {@code system:volume-scheduler} and the guide's step-4 ClusterRole {@code
   * hami-podgroup-reader}, after applying the PodGroup CRD of the same scheduler-plugins release.
   * The API server stays v1.37.2: three minors newer than the scheduler, outside the version-skew
   * policy (no 1.34 or 1.35 API server can be built from the modules the proxy serves;
   * SCHEDULER.md).
   *
   * @param extenderJar the runnable extender jar
   * @param workDir where configuration and logs go
   * @param kubeScheduler {@code testing/schedplugins/bin/kube-scheduler}
   * @param podGroupCrd scheduler-plugins v0.34.7's {@code manifests/coscheduling/crd.yaml}
   * @return the running cluster
   * @throws Exception when something cannot be created or started
   */
  public static RealSchedulerCluster startWithCoscheduling(
      Path extenderJar, Path workDir, Path kubeScheduler, Path podGroupCrd) throws Exception {
    for (Path f : List.of(extenderJar, kubeScheduler, podGroupCrd)) {
      if (!Files.isRegularFile(f)) {
        throw new IllegalStateException(
            "missing "
                + f
                + " (the extender jar: mvn -B -DskipTests package -pl "
                + "examples/extender -am; kube-scheduler: testing/schedplugins/build; the CRD: in Go's module cache "
                + "once testing/schedplugins/build ran)");
      }
    }
    Files.createDirectories(workDir);
    CountingProxy proxy = CountingProxy.start();
    RealApiServer k8s;
    try {
      k8s = RealApiServer.builder().clientReadTimeout(Duration.ofSeconds(30)).start();
    } catch (RuntimeException e) {
      proxy.close();
      throw e;
    }
    RealSchedulerCluster c = new RealSchedulerCluster(k8s, proxy, Gang.COSCHEDULING);
    try {
      ApiClient client = k8s.apiClient();
      // posted as read (a typed round trip through client-java's model adds empty schema fields the
      // server refuses)
      Object crd = new org.yaml.snakeyaml.Yaml().load(Files.readString(podGroupCrd));
      CustomObjectsApi custom = new CustomObjectsApi(client);
      custom
          .createClusterCustomObject("apiextensions.k8s.io", "v1", "customresourcedefinitions", crd)
          .execute();
      long established = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!c.crdEstablished(custom)) {
        if (System.nanoTime() > established) {
          throw new IllegalStateException(
              "the PodGroup CRD from " + podGroupCrd + " was not Established within 30 s");
        }
        sleep(100);
      }
      k8s.create(
          Map.of(
              "apiVersion", "v1", "kind", "Namespace", "metadata", Map.of("name", "hami-system")));
      CoreV1Api core = new CoreV1Api(client);
      core.createNamespacedServiceAccount(
              "hami-system",
              new io.kubernetes.client.openapi.models.V1ServiceAccount()
                  .metadata(
                      new io.kubernetes.client.openapi.models.V1ObjectMeta()
                          .name("hami-scheduler")))
          .execute();
      io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api rbac =
          new io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api(client);
      // the guide's step 4 (shared/fixtures/guide/rbac-podgroup-reader.yaml)
      rbac.createClusterRole(
              new io.kubernetes.client.openapi.models.V1ClusterRole()
                  .metadata(
                      new io.kubernetes.client.openapi.models.V1ObjectMeta()
                          .name("hami-podgroup-reader"))
                  .addRulesItem(
                      new io.kubernetes.client.openapi.models.V1PolicyRule()
                          .addApiGroupsItem("scheduling.x-k8s.io")
                          .addResourcesItem("podgroups")
                          .verbs(List.of("get", "list", "watch", "create", "update", "patch"))))
          .execute();
      for (String role :
          List.of("hami-podgroup-reader", "system:kube-scheduler", "system:volume-scheduler")) {
        rbac.createClusterRoleBinding(
                new io.kubernetes.client.openapi.models.V1ClusterRoleBinding()
                    .metadata(
                        new io.kubernetes.client.openapi.models.V1ObjectMeta()
                            .name("hami-scheduler-" + role.replace(':', '-')))
                    .roleRef(
                        new io.kubernetes.client.openapi.models.V1RoleRef()
                            .apiGroup("rbac.authorization.k8s.io")
                            .kind("ClusterRole")
                            .name(role))
                    .addSubjectsItem(
                        new io.kubernetes.client.openapi.models.RbacV1Subject()
                            .kind("ServiceAccount")
                            .name("hami-scheduler")
                            .namespace("hami-system")))
            .execute();
      }
      String token =
          core.createNamespacedServiceAccountToken(
                  "hami-scheduler",
                  "hami-system",
                  new io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest()
                      .spec(
                          new io.kubernetes.client.openapi.models.V1TokenRequestSpec()
                              .expirationSeconds(7200L)))
              .execute()
              .getStatus()
              .getToken();
      String admin = Files.readString(k8s.kubeconfigFile());
      java.util.regex.Matcher server =
          java.util.regex.Pattern.compile("server: (\\S+)").matcher(admin);
      java.util.regex.Matcher ca =
          java.util.regex.Pattern.compile("certificate-authority-data: (\\S+)").matcher(admin);
      if (!server.find() || !ca.find()) {
        throw new IllegalStateException("cannot read server and CA from " + k8s.kubeconfigFile());
      }
      Path kubeconfig = workDir.resolve("hami-scheduler.kubeconfig");
      Files.writeString(
          kubeconfig,
          """
          apiVersion: v1
          kind: Config
          clusters:
            - name: realcluster
              cluster: {server: %s, certificate-authority-data: %s}
          users:
            - name: hami-scheduler
              user: {token: %s}
          contexts:
            - name: hami-scheduler
              context: {cluster: realcluster, user: hami-scheduler}
          current-context: hami-scheduler
          """
              .formatted(server.group(1), ca.group(1), token));
      Path config = workDir.resolve("scheduler-config.yaml");
      Files.writeString(config, guideConfiguration("http://127.0.0.1:" + proxy.port(), kubeconfig));
      c.externalScheduler =
          new ProcessBuilder(
                  kubeScheduler.toString(), "--config=" + config, "--secure-port=0", "--v=2")
              .redirectErrorStream(true)
              .redirectOutput(workDir.resolve("kube-scheduler.log").toFile())
              .start();
    } catch (Exception e) {
      c.close();
      throw e;
    }
    c.startNodesAndExtenders(extenderJar, workDir);
    return c;
  }

  /**
   * The guide's profile (shared/fixtures/guide/scheduler-config.yaml): Coscheduling in multiPoint,
   * PrioritySort disabled, {@code permitWaitingTimeSeconds: 10}, and HAMi's chart's extender
   * registration, plain HTTP ({@code nvidia.com/priority} managed too, as the guide's ConfigMap has
   * it).
   *
   * @param urlPrefix where kube-scheduler sends filter and bind
   * @param kubeconfig the scheduler's kubeconfig
   * @return the KubeSchedulerConfiguration
   */
  public static String guideConfiguration(String urlPrefix, Path kubeconfig) {
    return """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        leaderElection:
          leaderElect: false
        clientConnection:
          kubeconfig: "%s"
        profiles:
          - schedulerName: %s
            plugins:
              multiPoint:
                enabled:
                  - name: Coscheduling
              queueSort:
                disabled:
                  - name: PrioritySort
            pluginConfig:
              - name: Coscheduling
                args:
                  permitWaitingTimeSeconds: 10
        extenders:
          - urlPrefix: "%s"
            filterVerb: filter
            bindVerb: bind
            enableHTTPS: false
            nodeCacheCapable: true
            weight: 1
            httpTimeout: 30s
            managedResources:
              - name: nvidia.com/gpu
                ignoredByScheduler: true
              - name: nvidia.com/gpumem
                ignoredByScheduler: true
              - name: nvidia.com/gpucores
                ignoredByScheduler: true
              - name: nvidia.com/gpumem-percentage
                ignoredByScheduler: true
              - name: nvidia.com/priority
                ignoredByScheduler: true
        """
        .formatted(kubeconfig, SCHEDULER, urlPrefix);
  }

  private boolean crdEstablished(CustomObjectsApi custom) throws ApiException {
    Object o =
        custom
            .getClusterCustomObject(
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "podgroups.scheduling.x-k8s.io")
            .execute();
    JsonNode crd = new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(o);
    for (JsonNode cond : crd.at("/status/conditions")) {
      if (cond.path("type").asText().equals("Established")
          && cond.path("status").asText().equals("True")) {
        return true;
      }
    }
    return false;
  }

  /**
   * @return which gang scheduling this cluster's scheduler does
   */
  public Gang gang() {
    return gang;
  }

  /**
   * @return the control plane (its metrics, its clients)
   */
  public RealApiServer apiServer() {
    return k8s;
  }

  /**
   * HAMi's chart's extender registration (charts/hami/templates/scheduler/configmap.yaml), plain
   * HTTP, on a profile with the default plugins (1.37's gang plugins join them with
   * GenericWorkload).
   *
   * @param urlPrefix where kube-scheduler sends filter and bind
   * @return the KubeSchedulerConfiguration
   */
  public static String schedulerConfiguration(String urlPrefix) {
    return """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        leaderElection:
          leaderElect: false
        profiles:
          - schedulerName: %s
        extenders:
          - urlPrefix: "%s"
            filterVerb: filter
            bindVerb: bind
            enableHTTPS: false
            nodeCacheCapable: true
            weight: 1
            httpTimeout: 30s
            managedResources:
              - name: nvidia.com/gpu
                ignoredByScheduler: true
              - name: nvidia.com/gpumem
                ignoredByScheduler: true
              - name: nvidia.com/gpucores
                ignoredByScheduler: true
              - name: nvidia.com/gpumem-percentage
                ignoredByScheduler: true
        """
        .formatted(SCHEDULER, urlPrefix);
  }

  void createNode(RealGpuNode node) {
    Map<String, String> resources =
        Map.of(
            "cpu",
            "64",
            "memory",
            "512Gi",
            "pods",
            "110",
            "nvidia.com/gpu",
            Long.toString(node.gpuSlots()),
            FLOOR_RESOURCE,
            Long.toString(node.gpuSlots()));
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Node",
            "metadata",
            Map.of(
                "name",
                node.name(),
                "labels",
                Map.of(HOSTNAME, node.name()),
                "annotations",
                Map.of(
                    REGISTER,
                    node.registration(),
                    "hami.io/node-handshake",
                    "Reported 2026-12-01 00:00:00.000000000 +0000 UTC")),
            "status",
            Map.of(
                "capacity",
                resources,
                "allocatable",
                resources,
                "conditions",
                List.of(Map.of("type", "Ready", "status", "True", "reason", "KubeletReady")))));
    // the TaintNodesByCondition admission plugin adds node.kubernetes.io/not-ready:NoSchedule on
    // create; with no kubelet or node controller, remove it as the node controller would
    k8s.mutate(
        "nodes",
        null,
        node.name(),
        o -> {
          o.withObjectProperty("spec").remove("taints");
          return o;
        });
  }

  /** Cordons every node the scenario does not use, uncordons the others. */
  private void cordonOthers(Scenario s) {
    for (String name : RealGpuNode.ALL.keySet()) {
      boolean off = !s.nodes().contains(name);
      if (k8s.get("nodes", null, name).orElseThrow().at("/spec/unschedulable").asBoolean(false)
          != off) {
        k8s.mutate(
            "nodes",
            null,
            name,
            o -> {
              o.withObjectProperty("spec").put("unschedulable", off);
              return o;
            });
      }
    }
  }

  /**
   * Runs a scenario once through an extender: creates its PodGroups and pods (timed from the first
   * pod's creation), waits until every pod is Running or {@link #RUN_TIMEOUT} passed, verifies, and
   * deletes them.
   *
   * @param s the scenario
   * @param mode which extender kube-scheduler's calls go to
   * @return what the run showed
   * @throws IllegalArgumentException for {@link ExtenderMode#FLOOR} (use {@link #runFloor})
   * @throws Exception when the API server refuses a creation or the run is interrupted
   */
  public ScenarioRun run(Scenario s, ExtenderMode mode) throws Exception {
    if (!mode.hasExtender()) {
      throw new IllegalArgumentException("the floor needs its placement: runFloor(scenario, pins)");
    }
    return run(s, mode, Map.of());
  }

  /**
   * Runs a scenario once as the control plane's floor ({@link ExtenderMode#FLOOR}): kube-scheduler
   * alone, the same PodGroups, each pod asking for one {@link #FLOOR_RESOURCE} and nothing the
   * extender manages, pinned by a required node affinity on {@code kubernetes.io/hostname} (not
   * {@code spec.nodeName}, which would skip kube-scheduler altogether: with the affinity every pod
   * still goes through the whole scheduling cycle, every node through Filter, the gang's Permit
   * included, and binds through the default binder's {@code pods/binding}); a simulated kubelet per
   * node marks each pod Running {@link #ALLOCATE_MS} ms after it sees it bound; no lock. Verified:
   * every pod Running on its pinned node, bound once, the extender never called, no node written.
   *
   * @param s the scenario
   * @param pins the node of each of the scenario's pods, by {@link Scenario.ScenarioPod#name()}
   *     (e.g. a gang-retry run's {@link ScenarioRun#nodes()})
   * @return what the run showed
   * @throws IllegalArgumentException when a pod has no pin or is pinned outside the scenario's
   *     nodes
   * @throws Exception when the API server refuses a creation or the run is interrupted
   */
  public ScenarioRun runFloor(Scenario s, Map<String, String> pins) throws Exception {
    for (Scenario.ScenarioPod p : s.pods()) {
      String node = pins.get(p.name());
      if (node == null || !s.nodes().contains(node)) {
        throw new IllegalArgumentException(
            "floor of "
                + s.name()
                + ": pod "
                + p.name()
                + " pinned to "
                + node
                + ", not one of the scenario's nodes "
                + s.nodes());
      }
    }
    return run(s, ExtenderMode.FLOOR, pins);
  }

  private ScenarioRun run(Scenario s, ExtenderMode mode, Map<String, String> pins)
      throws Exception {
    String tag = s.name() + "-" + mode.label().charAt(0) + (++runs);
    cordonOthers(s);
    if (mode.hasExtender()) {
      proxy.target(extender(mode).url());
    }
    CustomObjectsApi custom = new CustomObjectsApi(k8s.apiClient());
    for (Map.Entry<String, Integer> g : s.groups().entrySet()) {
      if (gang
          == Gang.COSCHEDULING) { // the guide's PodGroup (shared/fixtures/guide/gang-training.yaml)
        custom
            .createNamespacedCustomObject(
                "scheduling.x-k8s.io",
                "v1alpha1",
                NS,
                "podgroups",
                Map.of(
                    "apiVersion",
                    "scheduling.x-k8s.io/v1alpha1",
                    "kind",
                    "PodGroup",
                    "metadata",
                    Map.of("name", tag + "-" + g.getKey(), "namespace", NS),
                    "spec",
                    Map.of("minMember", g.getValue(), "scheduleTimeoutSeconds", 60)))
            .execute();
      } else {
        k8s.createPodGroup(NS, tag + "-" + g.getKey(), g.getValue(), Map.of());
      }
    }
    List<String> pods = new ArrayList<>();
    try (DevicePlugins plugins = new DevicePlugins(k8s, this.pods, s.nodes(), mode.hasExtender())) {
      double load =
          java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
      proxy.reset();
      k8s.resetCounters();
      long t0 = System.nanoTime();
      for (Scenario.ScenarioPod p : s.pods()) {
        String name = tag + "-" + p.name();
        pods.add(name);
        Map<String, Object> metadata = new HashMap<>(Map.of("name", name, "namespace", NS));
        Map<String, Object> spec =
            new HashMap<>(
                Map.of(
                    "schedulerName",
                    SCHEDULER,
                    "containers",
                    List.of(
                        Map.of(
                            "name",
                            "worker",
                            "image",
                            "ubuntu:22.04",
                            "command",
                            List.of("sleep", "3600"),
                            "resources",
                            Map.of(
                                "limits",
                                mode.hasExtender()
                                    ? Map.of(
                                        "nvidia.com/gpu",
                                        "1",
                                        "nvidia.com/gpumem",
                                        "3000",
                                        "nvidia.com/gpucores",
                                        "30")
                                    : Map.of(FLOOR_RESOURCE, "1"))))));
        if (!mode.hasExtender()) {
          spec.put("affinity", pinnedTo(pins.get(p.name())));
        }
        if (p.group().isPresent()) {
          String group = tag + "-" + p.group().get();
          metadata.put("labels", Map.of("scheduling.x-k8s.io/pod-group", group));
          if (gang == Gang.KUBERNETES_1_37) {
            spec.put("schedulingGroup", Map.of("podGroupName", group));
          }
        }
        k8s.create(Map.of("apiVersion", "v1", "kind", "Pod", "metadata", metadata, "spec", spec));
      }
      long firstBoundAt = -1;
      long boundAt = -1;
      long runningAt = -1;
      long deadline = t0 + RUN_TIMEOUT.toNanos();
      long seen = -1;
      Set<String> appeared = new HashSet<>();
      while (System.nanoTime() < deadline) {
        seen = this.pods.awaitChange(seen, 100);
        long at = System.nanoTime();
        List<Map<?, ?>> now = new ArrayList<>();
        for (String n : pods) {
          Optional<Map<?, ?>> p = this.pods.pod(n);
          if (p.isPresent()) {
            appeared.add(n);
            now.add(p.get());
          } else if (appeared.contains(n)) {
            throw new IllegalStateException("pod " + n + " is gone");
          }
        }
        if (firstBoundAt < 0 && now.stream().anyMatch(p -> !PodWatch.nodeName(p).isEmpty())) {
          firstBoundAt = at;
        }
        if (now.size() < pods.size()) {
          continue; // created, not seen yet
        }
        if (boundAt < 0 && now.stream().allMatch(p -> !PodWatch.nodeName(p).isEmpty())) {
          boundAt = at;
        }
        if (now.stream().allMatch(p -> PodWatch.phase(p).equals("Running"))) {
          runningAt = at;
          break;
        }
      }
      Map<RequestKey, Long> counts = k8s.requestCounts();
      Map<String, Long> calls = proxy.counts();
      Map<String, String> nodes = new LinkedHashMap<>();
      s.pods()
          .forEach(
              p -> nodes.put(p.name(), pod(tag + "-" + p.name()).at("/spec/nodeName").asText("-")));
      nodes.replaceAll((p, n) -> n.isEmpty() ? "-" : n);
      List<String> violations =
          new ArrayList<>(
              mode.hasExtender()
                  ? verify(pods, plugins.served())
                  : verifyFloor(tag, pins, nodes, plugins.served(), counts, calls));
      if (runningAt < 0) {
        violations.add(
            0,
            "not every pod Running within "
                + RUN_TIMEOUT.toSeconds()
                + " s: "
                + pods.stream()
                    .map(
                        p ->
                            p
                                + "@"
                                + pod(p).at("/spec/nodeName").asText("-")
                                + "/"
                                + pod(p).at("/status/phase").asText())
                    .toList());
      }
      List<String> locksLeft = new ArrayList<>();
      long lockDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      do {
        locksLeft.clear();
        s.nodes().stream()
            .filter(n -> !lock(n).isEmpty())
            .forEach(n -> locksLeft.add(n + "=" + lock(n)));
        if (!locksLeft.isEmpty()) {
          Thread.sleep(20);
        }
      } while (!locksLeft.isEmpty() && System.nanoTime() < lockDeadline);
      violations.addAll(plugins.errors());
      long bindings = counts.getOrDefault(new RequestKey("create", "pods/binding"), 0L);
      if (runningAt >= 0 && bindings != pods.size()) {
        violations.add("pods/binding created " + bindings + " times for " + pods.size() + " pods");
      }
      if (runningAt >= 0 && mode.hasExtender() && calls.getOrDefault("/bind", 0L) < pods.size()) {
        violations.add(
            "kube-scheduler called the extender's bind "
                + calls.getOrDefault("/bind", 0L)
                + " times for "
                + pods.size()
                + " pods");
      }
      return new ScenarioRun(
          s.name(),
          mode,
          pods.size(),
          firstBoundAt < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(firstBoundAt - t0),
          boundAt < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(boundAt - t0),
          runningAt < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(runningAt - t0),
          nodes,
          calls,
          counts.getOrDefault(new RequestKey("patch", "nodes"), 0L),
          counts.getOrDefault(new RequestKey("get", "nodes"), 0L),
          bindings,
          violations,
          locksLeft,
          plugins.handoffMedianMs(),
          load);
    } finally {
      CoreV1Api core = new CoreV1Api(k8s.apiClient());
      for (String p : pods) {
        try {
          core.deleteNamespacedPod(p, NS).gracePeriodSeconds(0).execute();
        } catch (ApiException e) {
          if (e.getCode() != 404) {
            throw e;
          }
        }
      }
      for (String g : s.groups().keySet()) {
        if (gang == Gang.COSCHEDULING) {
          custom
              .deleteNamespacedCustomObject(
                  "scheduling.x-k8s.io", "v1alpha1", NS, "podgroups", tag + "-" + g)
              .execute();
        } else {
          custom
              .deleteNamespacedCustomObject(
                  "scheduling.k8s.io", "v1beta1", NS, "podgroups", tag + "-" + g)
              .execute();
        }
      }
    }
  }

  /**
   * A required node affinity on the label {@code kubernetes.io/hostname} (set on every node, as
   * kubelet sets it): the pod may go to {@code node} only. A label expression, not {@code
   * matchFields} on {@code metadata.name}: NodeAffinity's PreFilter narrows the candidate nodes to
   * the named ones for the latter (k8s.io/kubernetes v1.37.2
   * pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go), so with a label every node
   * still passes through Filter as in the extender runs.
   */
  private static Map<String, Object> pinnedTo(String node) {
    return Map.of(
        "nodeAffinity",
        Map.of(
            "requiredDuringSchedulingIgnoredDuringExecution",
            Map.of(
                "nodeSelectorTerms",
                List.of(
                    Map.of(
                        "matchExpressions",
                        List.of(
                            Map.of(
                                "key", HOSTNAME, "operator", "In", "values", List.of(node))))))));
  }

  /**
   * The floor's checks: every pod bound to its pinned node and marked Running by the simulated
   * kubelet, kube-scheduler never called the extender, and no node was written (no lock: node PATCH
   * and PUT requests, the harness's own excluded, are zero).
   */
  private static List<String> verifyFloor(
      String tag,
      Map<String, String> pins,
      Map<String, String> nodes,
      Set<String> served,
      Map<RequestKey, Long> counts,
      Map<String, Long> calls) {
    List<String> out = new ArrayList<>();
    nodes.forEach(
        (p, node) -> {
          if (!node.equals("-") && !node.equals(pins.get(p))) {
            out.add(p + ": bound to " + node + " but pinned to " + pins.get(p));
          }
          if (!node.equals("-") && !served.contains(tag + "-" + p)) {
            out.add(p + ": not marked Running by " + node + "'s kubelet");
          }
        });
    if (!calls.isEmpty()) {
      out.add("kube-scheduler called the extender without interest in the pods: " + calls);
    }
    for (String verb : List.of("patch", "update")) {
      long n = counts.getOrDefault(new RequestKey(verb, "nodes"), 0L);
      if (n != 0) {
        out.add(n + " node " + verb + " request(s) during a run that takes no lock");
      }
    }
    return out;
  }

  /**
   * Every pod bound by the extender with HAMi's allocation ({@code bind-phase: success}, {@code
   * vgpu-node} = its node), handed off by its node's device plugin, and no card of any node over
   * its registered slots, memory or cores (summed over the pods' {@code vgpu-devices-allocated}).
   */
  List<String> verify(List<String> pods, Set<String> served) {
    List<String> out = new ArrayList<>();
    Map<String, long[]> used = new HashMap<>();
    for (String p : pods) {
      JsonNode pod = pod(p);
      String node = pod.at("/spec/nodeName").asText();
      if (node.isEmpty()) {
        continue; // reported as not Running
      }
      JsonNode ann = pod.at("/metadata/annotations");
      if (!"success".equals(ann.path("hami.io/bind-phase").asText())) {
        out.add(p + ": bind-phase " + ann.path("hami.io/bind-phase").asText("<none>"));
      }
      if (!node.equals(ann.path("hami.io/vgpu-node").asText())) {
        out.add(
            p
                + ": bound to "
                + node
                + " but hami.io/vgpu-node is "
                + ann.path("hami.io/vgpu-node").asText("<none>"));
      }
      if (!served.contains(p)) {
        out.add(p + ": not handed off by " + node + "'s device plugin");
      }
      String allocated = ann.path("hami.io/vgpu-devices-allocated").asText();
      if (allocated.isEmpty()) {
        out.add(p + ": no hami.io/vgpu-devices-allocated");
      }
      for (String container : allocated.split(";")) {
        for (String dev : container.split(":")) {
          if (!dev.isEmpty()) {
            String[] f = dev.split(",");
            long[] u = used.computeIfAbsent(node + "/" + f[0], k -> new long[3]);
            u[0]++;
            u[1] += Long.parseLong(f[2]);
            u[2] += Long.parseLong(f[3]);
          }
        }
      }
    }
    used.forEach(
        (key, u) -> {
          String node = key.substring(0, key.indexOf('/'));
          long[] card =
              RealGpuNode.named(node)
                  .map(n -> n.cards().get(key.substring(node.length() + 1)))
                  .orElse(null);
          if (card == null) {
            out.add(key + ": allocated on a card the node does not register");
          } else if (u[0] > card[0] || u[1] > card[1] || u[2] > card[2]) {
            out.add(
                key
                    + ": over-committed: "
                    + u[0]
                    + " slots / "
                    + u[1]
                    + " MiB / "
                    + u[2]
                    + " % of "
                    + card[0]
                    + " / "
                    + card[1]
                    + " / "
                    + card[2]);
          }
        });
    return out;
  }

  JsonNode pod(String name) {
    return k8s.get("pods", NS, name)
        .orElseThrow(() -> new IllegalStateException("pod " + name + " is gone"));
  }

  private String lock(String node) {
    return k8s.get("nodes", null, node)
        .orElseThrow()
        .at("/metadata/annotations")
        .path(LOCK)
        .asText("");
  }

  @Override
  public void close() {
    pods.close();
    extenders.values().forEach(ExtenderProcess::close);
    if (externalScheduler != null) {
      externalScheduler.destroy();
      try {
        if (!externalScheduler.waitFor(20, TimeUnit.SECONDS)) {
          externalScheduler.destroyForcibly();
        }
      } catch (InterruptedException e) {
        externalScheduler.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    k8s.close();
    proxy.close();
  }

  /** The runnable extender as its own JVM, HAMi's flags on its command line, logs to a file. */
  static final class ExtenderProcess implements AutoCloseable {
    private final Process process;
    private final int port;
    private final Path log;

    private ExtenderProcess(Process process, int port, Path log) {
      this.process = process;
      this.port = port;
      this.log = log;
    }

    static ExtenderProcess start(Path jar, Path kubeconfig, ExtenderMode mode, Path log)
        throws IOException {
      int port = freePort();
      Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      List<String> command =
          new ArrayList<>(
              List.of(
                  java.toString(),
                  "-Xmx384m",
                  "-jar",
                  jar.toString(),
                  "--kubeconfig=" + kubeconfig,
                  "--bind-address=127.0.0.1",
                  "--port=" + port,
                  "--scheduler-name=" + SCHEDULER));
      command.addAll(mode.flags());
      ProcessBuilder pb =
          new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      return new ExtenderProcess(pb.start(), port, log);
    }

    String url() {
      return "http://127.0.0.1:" + port;
    }

    void awaitReady(Duration timeout) {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
      long end = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < end) {
        if (!process.isAlive()) {
          throw new IllegalStateException(
              "the extender exited with "
                  + process.exitValue()
                  + "; its log "
                  + log
                  + " ends: "
                  + tail());
        }
        try {
          if (http.send(
                      HttpRequest.newBuilder(URI.create(url() + "/readyz"))
                          .timeout(Duration.ofSeconds(2))
                          .build(),
                      HttpResponse.BodyHandlers.discarding())
                  .statusCode()
              == 200) {
            return;
          }
        } catch (IOException e) {
          // not listening yet
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for the extender", e);
        }
        sleep(100);
      }
      throw new IllegalStateException(
          "the extender did not answer /readyz 200 within "
              + timeout.toSeconds()
              + " s; its log "
              + log
              + " ends: "
              + tail());
    }

    private String tail() {
      try {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
      } catch (IOException e) {
        return "(unreadable: " + e.getMessage() + ")";
      }
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /**
   * One simulated HAMi device plugin per node (own client and hami-lock stack, own thread): woken
   * by each change of the harness's {@link PodWatch}, it looks at the pods bound to its node, as
   * kubelet's pod watch sees them; for one in bind phase {@code allocating} it spends {@link
   * #ALLOCATE_MS} in Allocate, hands off through {@code DevicePluginHandoff} (which finds the pod
   * through the node lock, marks {@code bind-phase: success} and releases the lock), and kubelet's
   * own thread marks the pod Running through the status subresource {@code
   * hamilock.demo.runningAfterMs} later (default 0). For the floor (no HAMi) it is a plain kubelet
   * instead: each pod it sees bound is marked Running {@link #ALLOCATE_MS} later, pods
   * independently of each other (kubelet's pod workers), so the floor run holds no node-wide serial
   * step; {@link ScenarioRun#floorMs()} adds the lock's. In both, a pod being deleted (an
   * eviction's graceful deletion) is deleted at once, as kubelet does once its containers stopped.
   */
  static final class DevicePlugins implements AutoCloseable {
    private final RealApiServer k8s;
    private final PodWatch pods;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Set<String> served = ConcurrentHashMap.newKeySet();
    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    // per node, when its plugin's last release was answered (nanoTime), until the next pod is seen
    private final Map<String, Long> releasedAt = new ConcurrentHashMap<>();
    private final List<Long> handoffs = java.util.Collections.synchronizedList(new ArrayList<>());
    private final List<Thread> threads = new ArrayList<>();
    private final List<KubernetesHamiStack> stacks = new ArrayList<>();
    private final List<String> errors = new ArrayList<>();
    private final java.util.concurrent.ScheduledExecutorService kubelet =
        Executors.newScheduledThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, "kubelet");
              t.setDaemon(true);
              return t;
            });

    /** {@link ScenarioRun#handoffMs()}: the median gap in ms, -1 without any. */
    long handoffMedianMs() {
      List<Long> gaps;
      synchronized (handoffs) {
        gaps = new ArrayList<>(handoffs);
      }
      if (gaps.isEmpty()) {
        return -1;
      }
      gaps.sort(null);
      return TimeUnit.NANOSECONDS.toMillis(gaps.get(gaps.size() / 2));
    }

    DevicePlugins(RealApiServer k8s, PodWatch pods, List<String> nodes, boolean hami) {
      this.k8s = k8s;
      this.pods = pods;
      for (String node : nodes) {
        ApiClient client = k8s.newApiClient(Duration.ofSeconds(10));
        Optional<KubernetesHamiStack> stack =
            hami
                ? Optional.of(KubernetesHamiStack.builder(client).watch(false).build())
                : Optional.empty();
        stack.ifPresent(stacks::add);
        Thread t = new Thread(() -> loop(node, client, stack), "device-plugin-" + node);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
    }

    private void loop(String node, ApiClient client, Optional<KubernetesHamiStack> hami) {
      CoreV1Api core = new CoreV1Api(client);
      long changes = -1;
      boolean pending = false;
      while (!stop.get()) {
        try {
          // woken by the pod watch, as kubelet is; a pod left allocating is looked at again soon
          changes = pods.awaitChange(changes, pending ? 10 : 200);
          pending = false;
          for (Map<?, ?> p : pods.boundTo(node)) {
            String name = PodWatch.name(p);
            if (PodWatch.deleting(p)) {
              try { // its containers stopped at once: kubelet confirms an eviction's deletion
                core.deleteNamespacedPod(name, NS).gracePeriodSeconds(0).execute();
              } catch (ApiException e) {
                if (e.getCode() != 404) {
                  throw e;
                }
              }
              continue;
            }
            if (hami.isEmpty()) {
              if (seen.add(name)) {
                kubelet.schedule(() -> markRunning(node, name), ALLOCATE_MS, TimeUnit.MILLISECONDS);
              }
              continue;
            }
            if (!"allocating".equals(PodWatch.annotation(p, "hami.io/bind-phase"))
                || served.contains(name)) {
              continue;
            }
            Long released = releasedAt.remove(node);
            if (released != null) {
              handoffs.add(System.nanoTime() - released);
            }
            Thread.sleep(ALLOCATE_MS);
            HandoffResult r = hami.get().devicePluginHandoff("NVIDIA").allocateAll(node);
            if (r.status() == HandoffResult.Status.COMPLETED && r.pod().isPresent()) {
              releasedAt.put(node, System.nanoTime());
              String pod = r.pod().get().name();
              served.add(pod); // a lagging watch may still show it allocating
              // kubelet's status update, apart from the device manager's Allocate
              kubelet.schedule(
                  () -> markRunning(node, pod), RUNNING_AFTER_MS, TimeUnit.MILLISECONDS);
            }
            pending |= !served.contains(name);
          }
        } catch (InterruptedException e) {
          return;
        } catch (ApiException | RuntimeException e) {
          if (stop.get()) {
            return; // interrupted by close()
          }
          synchronized (errors) {
            errors.add("device plugin " + node + ": " + e);
          }
        }
      }
    }

    /** Marks the pod Running through the status subresource, as kubelet would. */
    private void markRunning(String node, String pod) {
      try {
        k8s.mutate(
            "pods",
            NS,
            pod,
            o -> {
              o.withObjectProperty("status").put("phase", "Running");
              return o;
            });
        served.add(pod);
      } catch (RuntimeException e) {
        if (!stop.get()) {
          synchronized (errors) {
            errors.add("kubelet " + node + ": " + e);
          }
        }
      }
    }

    /**
     * @return the pods handed off by their node's simulated device plugin (recorded at the
     *     hand-off, marked Running after it), or (floor) marked Running by their node's kubelet
     */
    Set<String> served() {
      return served;
    }

    List<String> errors() {
      synchronized (errors) {
        return List.copyOf(errors);
      }
    }

    @Override
    public void close() {
      stop.set(true);
      kubelet.shutdownNow();
      threads.forEach(Thread::interrupt);
      for (Thread t : threads) {
        try {
          t.join(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      stacks.forEach(KubernetesHamiStack::close);
    }
  }

  /**
   * Forwards kube-scheduler's extender calls to the current extender and counts them by path. Kept
   * transparent (issue 25): the JDK's HttpServer leaves Nagle's algorithm on unless {@code
   * sun.net.httpserver.nodelay} is true when its first server is created (read once, jdk.httpserver
   * {@code ServerConfig}); with it off, each answer's body waited for kube-scheduler's delayed ACK
   * of the headers, measured 42-48 ms between the end of one {@code /filter} and the start of the
   * next against 1-12 ms with it on. The forwarding client speaks HTTP/1.1 (no h2c upgrade offer
   * per connection to the extender's HTTP/1.1 server).
   */
  static final class CountingProxy implements AutoCloseable {
    private final HttpServer server;
    private final HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private volatile String target;

    private CountingProxy(HttpServer server) {
      this.server = server;
    }

    static CountingProxy start() throws IOException {
      System.setProperty("sun.net.httpserver.nodelay", "true");
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      CountingProxy p = new CountingProxy(server);
      server.setExecutor(
          Executors.newFixedThreadPool(
              64,
              r -> {
                Thread t = new Thread(r, "extender-proxy");
                t.setDaemon(true);
                return t;
              }));
      server.createContext("/", p::handle);
      server.start();
      return p;
    }

    int port() {
      return server.getAddress().getPort();
    }

    void target(String base) {
      this.target = base;
    }

    void reset() {
      counts.clear();
    }

    Map<String, Long> counts() {
      Map<String, Long> out = new LinkedHashMap<>();
      counts.forEach((k, v) -> out.put(k, v.get()));
      return out;
    }

    private void handle(HttpExchange ex) throws IOException {
      String path = ex.getRequestURI().getPath();
      counts.computeIfAbsent(path, k -> new AtomicLong()).incrementAndGet();
      byte[] body;
      try (InputStream in = ex.getRequestBody()) {
        body = in.readAllBytes();
      }
      int code;
      byte[] answer;
      try {
        HttpResponse<byte[]> r =
            http.send(
                HttpRequest.newBuilder(URI.create(target + path))
                    .timeout(Duration.ofSeconds(35))
                    .header("Content-Type", "application/json")
                    .method(ex.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body))
                    .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        code = r.statusCode();
        answer = r.body();
      } catch (IOException | InterruptedException e) {
        code = 502;
        answer = ("proxy: " + e).getBytes(StandardCharsets.UTF_8);
      }
      ex.getResponseHeaders().set("Content-Type", "application/json");
      ex.sendResponseHeaders(code, answer.length == 0 ? -1 : answer.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(answer);
      }
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }
}
