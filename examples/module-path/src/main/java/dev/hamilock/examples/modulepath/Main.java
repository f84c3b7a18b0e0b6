package dev.hamilock.examples.modulepath;

import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.SimulatedKubelet;
import dev.hamilock.testkit.TestNode;
import dev.hamilock.testkit.TestPod;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Real API calls from a named module against the emulator: the annotation lock acquired and
 * released with its release watch observing both, then a gang member filtered, bound and handed to
 * the device plugin through the whole stack. Prints one line per step; exit code 0 when every step
 * holds, 1 otherwise.
 */
public final class Main {
  static final String NODE = "gpu-node-a";

  /** A HAMi registration published in Project-HAMi/HAMi#602 (fixture F-01: 1× Tesla T4). */
  static final String REGISTER =
      "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca,10,15360,100,NVIDIA-Tesla T4,0,true:";

  private Main() {}

  /**
   * @param args ignored
   * @throws Exception on an unexpected failure (exit code 1 with the stack trace)
   */
  public static void main(String[] args) throws Exception {
    boolean ok = run();
    System.out.println(ok ? "module path: all steps passed" : "module path: FAILED");
    System.exit(ok ? 0 : 1);
  }

  static boolean run() throws Exception {
    boolean ok =
        step(
            "named modules",
            Main.class.getModule().isNamed()
                && "dev.hamilock.k8s".equals(KubernetesLockStack.class.getModule().getName())
                && "dev.hamilock.k8s.bind".equals(KubernetesHamiStack.class.getModule().getName())
                && "dev.hamilock.testkit".equals(ApiServerEmulator.class.getModule().getName()));
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      k8s.createNode(
          TestNode.named(NODE)
              .annotation("hami.io/node-nvidia-register", REGISTER)
              .resource("nvidia.com/gpu", "10"));
      k8s.createPod(
          TestPod.named("default", "gang-worker-1")
              .label("scheduling.x-k8s.io/pod-group", "gang-training")
              .container("worker", "cuda:12.4")
              .limit("nvidia.com/gpu", "1")
              .limit("nvidia.com/gpumem", "3000")
              .limit("nvidia.com/gpucores", "30"));

      LockOwner owner = LockOwner.of("default", "gang-worker-1");
      try (KubernetesLockStack locks = KubernetesLockStack.builder(k8s.newApiClient()).build()) {
        ReleaseFeeder watch = locks.watch().orElseThrow();
        ok &= step("lock watch synced (list + watch)", watch.awaitSynced(Duration.ofSeconds(10)));
        locks.acquirer().acquire(NODE, owner, true, List.of(locks.nodeLock()));
        ok &=
            step(
                "lock acquired (PATCH)",
                locks
                    .nodeLock()
                    .read(NODE)
                    .flatMap(r -> r.owner())
                    .equals(java.util.Optional.of(owner)));
        ok &=
            step(
                "watch event: lock seen",
                await(() -> watch.observedLockValue(NODE, locks.nodeLock().key()).isPresent()));
        locks.nodeLock().release(NODE, owner);
        ok &= step("lock released (PATCH)", locks.nodeLock().read(NODE).isEmpty());
        ok &= step("watch event: release seen", await(() -> watch.releaseCount() >= 1));
      }

      try (KubernetesHamiStack hami =
              KubernetesHamiStack.builder(k8s.newApiClient())
                  .retryPolicy(RetryPolicy.builder().retryTimeout("10s").build())
                  .build();
          SimulatedKubelet<HandoffResult> kubelet =
              SimulatedKubelet.start(
                  k8s,
                  NODE,
                  Duration.ZERO,
                  (node, pod) -> hami.devicePluginHandoff("NVIDIA").allocateAll(node))) {
        // the library's raw, schema-free read (client-java's typed CoreV1Api needs an okhttp3
        // internal package the module path does not open)
        PodView pod =
            KubernetesCluster.create(k8s.newApiClient())
                .readPod("default", "gang-worker-1")
                .orElseThrow()
                .view();
        FilterDecision d = hami.extenderFilter().filter(pod, List.of(NODE));
        ok &=
            step(
                "filter chose " + d.node().orElse("none"),
                d.node().equals(java.util.Optional.of(NODE)));
        BindResult r = hami.podBinder().bind("default", "gang-worker-1", pod.uid(), NODE);
        ok &= step("bind " + r.outcome(), r.outcome().name().equals("BOUND"));
        HandoffResult h = kubelet.awaitAdmissions(1, Duration.ofSeconds(30)).get(0).result();
        ok &=
            step(
                "device plugin hand-off " + (h == null ? "threw" : h.status()),
                h != null && h.status() == HandoffResult.Status.COMPLETED && h.lockReleased());
      }
    }
    return ok;
  }

  private static boolean step(String what, boolean passed) {
    System.out.println((passed ? "ok   " : "FAIL ") + what);
    return passed;
  }

  private static boolean await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }
}
