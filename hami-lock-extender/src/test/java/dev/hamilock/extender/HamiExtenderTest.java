package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderBindingResult;
import dev.hamilock.extender.v1.ExtenderFilterResult;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.Fixtures;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

/**
 * The filter and bind verbs over the bind module's in-memory cluster with real NVIDIA
 * registrations.
 */
class HamiExtenderTest {

  private static final List<String> ALL = List.of("node-a", "node-b", "node-c");

  @Test
  void filterChoosesExactlyOneNodeWritesHamiAnnotationsAndReportsFailedNodes() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addGangWorker("w1", 20000); // fits an A40 (46068), not the T4 (15360)
    ExtenderFilterResult r = t.extender.filter(ExtenderArgs.ofNodeNames(pod, ALL));
    assertThat(r.error()).isEmpty();
    assertThat(r.nodeNames()).contains(List.of("node-a"));
    assertThat(r.failedNodes())
        .hasValueSatisfying(
            f -> {
              assertThat(f).containsOnlyKeys("node-b", "node-c");
              assertThat(f.get("node-b")).isEqualTo("1/1 CardInsufficientMemory");
              assertThat(f.get("node-c")).isNotBlank();
            });
    PodView stored = t.pod("w1");
    assertThat(stored.annotations())
        .containsEntry(HamiAnnotations.VGPU_NODE, "node-a")
        .containsKey(HamiAnnotations.VGPU_TIME)
        .containsKey("hami.io/vgpu-devices-to-allocate");
    assertThat(stored.annotations().get("hami.io/vgpu-devices-allocated"))
        .matches("GPU-[0-9a-f-]+,NVIDIA,20000,30:;");
    assertThat(stored.labels()).containsEntry(HamiAnnotations.VGPU_NODE, "node-a");
    assertThat(t.lockHeld("node-a")).as("filter takes no lock").isFalse();
  }

  @Test
  void noFitAnswersFailedNodesOnlyAndWritesNothing() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addGangWorker("big", 50000);
    ExtenderFilterResult r = t.extender.filter(ExtenderArgs.ofNodeNames(pod, ALL));
    assertThat(r.nodeNames()).isEmpty();
    assertThat(r.error()).isEmpty();
    assertThat(r.failedNodes())
        .hasValueSatisfying(
            f -> {
              assertThat(f).containsOnlyKeys(ALL);
              assertThat(f.get("node-a")).isEqualTo("2/2 CardInsufficientMemory");
            });
    assertThat(t.pod("big").annotations()).doesNotContainKey(HamiAnnotations.VGPU_NODE);
  }

  @Test
  void recordedHamiBodiesWithoutPodAnswerHamisError() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    for (String f : List.of("F-81-filter-args-no-pod.json", "F-81-filter-args-null-pod.json")) {
      ExtenderFilterResult r = t.extender.filter(ExtenderJson.decodeArgs(Fixtures.bytes(f)));
      assertThat(ExtenderJson.encode(r))
          .as(f)
          .isEqualTo(Fixtures.text("F-82-filter-result-error.json"));
    }
  }

  @Test
  void podWithoutDevicesPassesEveryCandidateUntouched() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addPlainPod("plain");
    ExtenderFilterResult r = t.extender.filter(ExtenderArgs.ofNodeNames(pod, ALL));
    assertThat(r.nodeNames()).contains(ALL);
    assertThat(r.failedNodes()).isEmpty();
    assertThat(t.pod("plain").annotations()).isEmpty();
  }

  @Test
  void missingCandidatesAndInvalidPodsAreErrors() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addGangWorker("w1", 1000);
    assertThat(
            t.extender
                .filter(new ExtenderArgs(Optional.of(pod), Optional.empty(), Optional.empty()))
                .error())
        .isEqualTo(HamiExtender.MISSING_NODES);
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(pod, List.of("node-a", " "))).error())
        .isEqualTo("extender args NodeNames[1] is blank");
    // the stored pod's requests are parsed (the request body only names the pod)
    ObjectNode bad = pod.deepCopy();
    ((ObjectNode) bad.get("metadata")).put("name", "w-16gi").put("uid", "uid-w-16gi");
    ((ObjectNode) bad.at("/spec/containers/0/resources/limits")).put("nvidia.com/gpumem", "16Gi");
    t.cluster.addPod(JsonViews.podView(bad));
    String error = t.extender.filter(ExtenderArgs.ofNodeNames(bad, ALL)).error();
    assertThat(error).contains("nvidia.com/gpumem").contains("17179869184");
    ((ObjectNode) pod.get("metadata")).remove("name");
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(pod, ALL)).error())
        .contains("Pod.metadata.name");
    // no namespace: an error naming the field, not a guess of "default" (JsonViews' rule)
    ObjectNode noNamespace = t.addGangWorker("w2", 1000);
    ((ObjectNode) noNamespace.get("metadata")).remove("namespace");
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(noNamespace, ALL)).error())
        .startsWith("invalid pod in extender args: Pod.metadata.namespace: missing or empty");
  }

  @Test
  void fullNodeListIsTheSimulationPathAndWritesNothing() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addGangWorker("sim", 20000);
    ObjectNode nodes =
        (ObjectNode)
            ExtenderJson.readTree(
                Fixtures.utf8(
                    "{\"items\":["
                        + "{\"metadata\":{\"name\":\"node-b\",\"annotations\":{\"hami.io/node-nvidia-register\":\""
                        + Fixtures.text("F-01-register-t4.value")
                        + "\"}}},"
                        + "{\"metadata\":{\"name\":\"node-a\",\"annotations\":{\"hami.io/node-nvidia-register\":\""
                        + Fixtures.text("F-03-register-2xa40.value")
                        + "\"}}}]}"));
    ExtenderFilterResult r =
        t.extender.filter(new ExtenderArgs(Optional.of(pod), Optional.of(nodes), Optional.empty()));
    assertThat(r.error()).isEmpty();
    assertThat(r.nodeNames()).isEmpty();
    assertThat(r.nodes())
        .hasValueSatisfying(
            n -> {
              assertThat(n.get("items")).hasSize(1);
              assertThat(n.at("/items/0/metadata/name").asText()).isEqualTo("node-a");
            });
    assertThat(r.failedNodes()).hasValueSatisfying(f -> assertThat(f).containsOnlyKeys("node-b"));
    assertThat(t.pod("sim").annotations()).doesNotContainKey(HamiAnnotations.VGPU_NODE);
  }

  @Test
  void theSimulationPathCountsTheCardsResourceClaimsTook() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addGangWorker("sim", 20000);
    List<String> a40s =
        List.of(
            "GPU-03f69c50-207a-2038-9b45-23cac89cb67d", "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae");
    t.cluster.setDra(
        new DraObjects(
            List.of(
                new ResourceSliceView(
                    "node-a-gpu",
                    "gpu.nvidia.com",
                    "node-a",
                    1,
                    "node-a",
                    List.of(
                        new ResourceSliceView.Device(
                            "gpu-0", Map.of("uuid", a40s.get(0)), Map.of()),
                        new ResourceSliceView.Device(
                            "gpu-1", Map.of("uuid", a40s.get(1)), Map.of())))),
            List.of(
                new ResourceClaimView(
                    "default",
                    "both-a40s",
                    "u1",
                    true,
                    "node-a",
                    List.of(
                        new ResourceClaimView.Result(
                            "gpu.nvidia.com", "node-a", "gpu-0", Optional.empty(), Map.of(), false),
                        new ResourceClaimView.Result(
                            "gpu.nvidia.com",
                            "node-a",
                            "gpu-1",
                            Optional.empty(),
                            Map.of(),
                            false)),
                    Set.of()))));
    ObjectNode nodes =
        (ObjectNode)
            ExtenderJson.readTree(
                Fixtures.utf8(
                    "{\"items\":[{\"metadata\":{\"name\":\"node-a\",\"annotations\":{"
                        + "\"hami.io/node-nvidia-register\":\""
                        + Fixtures.text("F-03-register-2xa40.value")
                        + "\"}}}]}"));

    ExtenderFilterResult r =
        t.extender.filter(new ExtenderArgs(Optional.of(pod), Optional.of(nodes), Optional.empty()));

    assertThat(r.error()).isEmpty();
    assertThat(r.failedNodes()).hasValueSatisfying(f -> assertThat(f).containsOnlyKeys("node-a"));
  }

  @Test
  void bindAfterFilterBindsAndLeavesTheLockToTheDevicePlugin() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addGangWorker("w1", 3000);
    String node =
        t.extender.filter(ExtenderArgs.ofNodeNames(pod, ALL)).nodeNames().orElseThrow().get(0);
    ExtenderBindingResult r =
        t.extender.bind(new ExtenderBindingArgs("w1", "default", "uid-w1", node));
    assertThat(r).isEqualTo(ExtenderBindingResult.OK);
    assertThat(t.cluster.readPod("default", "w1").orElseThrow().nodeName()).contains(node);
    assertThat(t.pod("w1").annotations()).containsEntry(HamiAnnotations.BIND_PHASE, "allocating");
    assertThat(t.lockHeld(node)).isTrue();
  }

  /** A failed bind's log line names its phases in ms (BindTimings), where the time went. */
  @Test
  void aFailedBindIsLoggedWithItsPhasesInMilliseconds() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    t.addGangWorker("w1", 3000);
    try (LogCapture log = LogCapture.start()) {
      ExtenderBindingResult r =
          t.extender.bind(new ExtenderBindingArgs("w1", "default", "uid-w1", "node-missing"));
      assertThat(r.error()).contains("node-missing");
      assertThat(log.expect("INFO dev\\.hamilock\\.extender\\.HamiExtender - .*bind failed.*"))
          .singleElement(as(InstanceOfAssertFactories.STRING))
          .contains("pod=default/w1", "node=node-missing", "outcome=")
          .containsPattern(
              "lockWaitMs=\\d+ refitMs=\\d+ annotateMs=\\d+ bindingMs=\\d+ totalMs=\\d+");
    }
  }

  @Test
  void bindOfAnUnknownPodOrBlankArgumentsIsAnErrorText() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    assertThat(t.extender.bind(new ExtenderBindingArgs("ghost", "default", "", "node-a")).error())
        .contains("ghost")
        .contains("not found");
    assertThat(t.extender.bind(new ExtenderBindingArgs("", "default", "", "node-a")).error())
        .isEqualTo("extender binding args missing PodName");
    assertThat(t.extender.bind(new ExtenderBindingArgs("p", " ", "", "node-a")).error())
        .isEqualTo("extender binding args missing PodNamespace");
    assertThat(t.extender.bind(new ExtenderBindingArgs("p", "default", "", "")).error())
        .isEqualTo("extender binding args missing Node");
  }

  @Test
  void nonGangPodFailsFastOnContentionWithHamisSuffix() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    t.addWorker("solo", 3000, false);
    t.holdLock("node-a");
    String error =
        t.extender.bind(new ExtenderBindingArgs("solo", "default", "uid-solo", "node-a")).error();
    assertThat(error)
        .endsWith(LockContentionException.CONTENTION_SUFFIX)
        .contains("node-a")
        .as("fail fast, no gang wait")
        .doesNotStartWith("timed out");
    assertThat(t.cluster.readPod("default", "solo").orElseThrow().isBound()).isFalse();
    assertThat(t.lockHeld("node-a")).as("the holder keeps its lock").isTrue();
  }

  @Test
  void gangMemberWaitsForTheLockAndBindsOnceItIsReleased() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(20));
    t.addGangWorker("g1", 3000);
    LockOwner holder = t.holdLock("node-a");
    CompletableFuture<ExtenderBindingResult> bind =
        CompletableFuture.supplyAsync(
            () -> t.extender.bind(new ExtenderBindingArgs("g1", "default", "uid-g1", "node-a")));
    long start = t.cluster.operationCount(InMemoryCluster.Operation.LOCK_READ);
    // wait until the member has retried at least twice while the lock is held
    while (t.cluster.operationCount(InMemoryCluster.Operation.LOCK_READ) < start + 3
        && !bind.isDone()) {
      Thread.onSpinWait();
    }
    assertThat(bind).as("still waiting while the holder has the lock").isNotDone();
    t.nvidiaLock().release("node-a", holder);
    assertThat(bind.get(20, TimeUnit.SECONDS)).isEqualTo(ExtenderBindingResult.OK);
    assertThat(t.cluster.readPod("default", "g1").orElseThrow().nodeName()).contains("node-a");
  }

  @Test
  void gangMemberGivesUpAfterTheRetryTimeoutWithHamisMessage() throws Exception {
    TestCluster t = new TestCluster(Duration.ofMillis(200));
    t.addGangWorker("g1", 3000);
    t.holdLock("node-a");
    String error =
        t.extender.bind(new ExtenderBindingArgs("g1", "default", "uid-g1", "node-a")).error();
    assertThat(error)
        .startsWith("timed out after 200ms waiting for node node-a to be unlocked")
        .endsWith("node lock contention");
    assertThat(t.cluster.readPod("default", "g1").orElseThrow().isBound()).isFalse();
  }

  @Test
  void fromConfigGivesBothFlowsTheFlagsNodePolicyAndTheBinderTheFlagsRetryTimeout()
      throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    List<String> ab = List.of("node-a", "node-b");
    java.util.Map<String, String> chosen = new java.util.LinkedHashMap<>();
    for (String policy : List.of("binpack", "spread")) {
      ExtenderConfig config =
          ExtenderConfig.builder()
              .schedulerFlags(
                  HamiSchedulerFlags.parse(
                      "--node-scheduler-policy=" + policy, "--node-lock-retry-timeout=150ms"))
              .build();
      HamiExtender extender =
          TestCluster.fromConfig(config, t.cluster, t.cluster, t.registry, t.locks);
      ObjectNode pod = t.addGangWorker("p-" + policy, 3000);
      ExtenderFilterResult r = extender.filter(ExtenderArgs.ofNodeNames(pod, ab));
      assertThat(r.error()).isEmpty();
      assertThat(r.nodeNames()).hasValueSatisfying(n -> assertThat(n).hasSize(1));
      chosen.put(policy, r.nodeNames().orElseThrow().get(0));
      assertThat(t.pod("p-" + policy).annotations())
          .as("the filter writes HAMi's annotations")
          .containsEntry(HamiAnnotations.VGPU_NODE, chosen.get(policy));
    }
    assertThat(chosen.get("binpack"))
        .as("--node-scheduler-policy reaches the filter's fitter")
        .isNotEqualTo(chosen.get("spread"));

    HamiExtender extender =
        TestCluster.fromConfig(
            ExtenderConfig.builder()
                .schedulerFlags(HamiSchedulerFlags.parse("--node-lock-retry-timeout=150ms"))
                .build(),
            t.cluster,
            t.cluster,
            t.registry,
            t.locks);
    t.addGangWorker("g1", 3000);
    t.holdLock("node-a");
    assertThat(extender.bind(new ExtenderBindingArgs("g1", "default", "uid-g1", "node-a")).error())
        .as("--node-lock-retry-timeout reaches the bind flow")
        .startsWith("timed out after 150ms waiting for node node-a to be unlocked");
  }

  @Test
  void theLockListenerHearsTheEndOfEachBindsAcquireOnTheBindingThread() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(20));
    t.addGangWorker("g1", 3000);
    List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
    NodeLockListener recorder =
        new NodeLockListener() {
          @Override
          public void waited(
              String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
            heard.add(
                Thread.currentThread().getName()
                    + " "
                    + node
                    + " "
                    + owner.name()
                    + " acquired="
                    + acquired
                    + " retried="
                    + (attempts > 1));
          }
        };
    HamiExtender extender =
        HamiExtender.create(
            TestCluster.filter(t.config, t.cluster, t.cluster, t.registry).build(),
            TestCluster.binder(t.config, t.cluster, t.cluster, t.registry, t.locks)
                .acquirer(
                    dev.hamilock.core.acquire.NodeLockAcquirer.create(
                        dev.hamilock.core.LockSettings.builder()
                            .retryPolicy(
                                RetryPolicy.builder()
                                    .pollInterval(Duration.ofMillis(10))
                                    .retryTimeout(Duration.ofSeconds(20))
                                    .build())
                            .listener(recorder)
                            .build()))
                .build(),
            t.cluster,
            t.registry);
    LockOwner holder = t.holdLock("node-a");
    java.util.concurrent.ExecutorService bindThread =
        java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> new Thread(r, "extender-http-1"));
    try {
      CompletableFuture<ExtenderBindingResult> bind =
          CompletableFuture.supplyAsync(
              () -> extender.bind(new ExtenderBindingArgs("g1", "default", "uid-g1", "node-a")),
              bindThread);
      long start = t.cluster.operationCount(InMemoryCluster.Operation.LOCK_READ);
      while (t.cluster.operationCount(InMemoryCluster.Operation.LOCK_READ) < start + 2
          && !bind.isDone()) {
        Thread.onSpinWait();
      }
      assertThat(heard).as("nothing heard while the member still waits").isEmpty();
      t.nvidiaLock().release("node-a", holder);
      assertThat(bind.get(20, TimeUnit.SECONDS)).isEqualTo(ExtenderBindingResult.OK);
      assertThat(heard).containsExactly("extender-http-1 node-a g1 acquired=true retried=true");
      org.assertj.core.api.Assertions.assertThatNullPointerException()
          .isThrownBy(() -> TestCluster.fromConfig(null, t.cluster, t.cluster, t.registry, t.locks))
          .withMessageContaining("config");
    } finally {
      bindThread.shutdownNow();
    }
  }
}
