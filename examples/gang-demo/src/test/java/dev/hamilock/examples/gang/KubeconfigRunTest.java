package dev.hamilock.examples.gang;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.examples.gang.input.InputLoader;
import dev.hamilock.examples.gang.run.MemberResult;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --kubeconfig} against an API emulator standing in for a real cluster (its kubeconfig
 * file): the plan is printed and nothing changes without {@code --yes}; with it the gang is bound
 * while a device-plugin stand-in (the bind module's hand-off, as HAMi's plugin does on kubelet's
 * Allocate) releases the node lock.
 */
class KubeconfigRunTest {
  @TempDir Path tmp;

  private static ApiServerEmulator cluster() throws Exception {
    ApiServerEmulator k8s = ApiServerEmulator.start();
    DemoInput in = new InputLoader(VendorRegistry.discover()).builtIn();
    in.nodes().forEach(n -> k8s.create(n.object()));
    in.podGroups().forEach(g -> k8s.create(g.object()));
    in.pods().forEach(p -> k8s.create(p.object()));
    return k8s;
  }

  private static boolean bound(ApiServerEmulator k8s, String pod) {
    JsonNode p = k8s.get("pods", "default", pod).orElseThrow();
    return !p.path("spec").path("nodeName").asText("").isEmpty();
  }

  @Test
  void withoutYesPrintsThePlanAndChangesNothing() throws Exception {
    try (ApiServerEmulator k8s = cluster()) {
      Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), k8s.kubeconfig());
      GangDemoTest.Run r = GangDemoTest.run("--kubeconfig", kubeconfig.toString());
      assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
      assertThat(r.result().errors())
          .singleElement()
          .satisfies(e -> assertThat(e).contains("without --yes"));
      assertThat(r.result().plan())
          .anySatisfy(
              l ->
                  assertThat(l)
                      .contains("would PATCH pod default/gang-worker-1")
                      .contains("hami.io/vgpu-devices-to-allocate"))
          .anySatisfy(
              l ->
                  assertThat(l)
                      .contains("would POST pods/gang-worker-4/binding in default -> node node-a"))
          .anySatisfy(
              l ->
                  assertThat(l).contains("would PATCH node node-a: annotation hami.io/mutex.lock"));
      assertThat(r.out()).contains("would POST pods/gang-worker-1/binding");
      // without --manifests the candidate nodes are the cluster's; the header said built-in ones
      assertThat(r.result().summary())
          .contains(
              "node(s) node-a, node-b from built-in:gang-training.yaml, cluster:http",
              " (its nodes with a HAMi registration); 2 scheduler replica(s)")
          .doesNotContain("built-in:nodes");
      assertThat(
              k8s.requestCount("patch", "pods")
                  + k8s.requestCount("create", "pods/binding")
                  + k8s.requestCount("patch", "nodes"))
          .isZero();
      for (int i = 1; i <= 4; i++) {
        assertThat(bound(k8s, "gang-worker-" + i)).isFalse();
      }
    }
  }

  @Test
  void withYesBindsTheGangOnTheCluster() throws Exception {
    try (ApiServerEmulator k8s = cluster();
        KubernetesHamiStack plugin =
            KubernetesHamiStack.builder(k8s.newApiClient(java.time.Duration.ofSeconds(10)))
                .watch(false)
                .build()) {
      Path kubeconfig = Files.writeString(tmp.resolve("kubeconfig"), k8s.kubeconfig());
      DevicePluginHandoff handoff = plugin.devicePluginHandoff("NVIDIA");
      AtomicBoolean stop = new AtomicBoolean();
      Thread kubelet =
          new Thread(
              () -> { // kubelet's Allocate on each node, as pods land there
                while (!stop.get()) {
                  handoff.allocateAll("node-a");
                  handoff.allocateAll("node-b");
                  try {
                    Thread.sleep(10);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              });
      kubelet.start();
      GangDemoTest.Run r;
      try {
        r = GangDemoTest.run("--kubeconfig", kubeconfig.toString(), "--yes");
      } finally {
        stop.set(true);
        kubelet.join(5000);
      }
      assertThat(r.result().exitCode()).as(r.out() + r.err()).isEqualTo(GangDemo.EXIT_OK);
      assertThat(r.result().plan())
          .anySatisfy(l -> assertThat(l).contains("will POST pods/gang-worker-1/binding"));
      assertThat(r.result().gang().orElseThrow().members()).allMatch(MemberResult::bound);
      assertThat(r.result().failFast()).isEmpty();
      for (int i = 1; i <= 4; i++) {
        assertThat(bound(k8s, "gang-worker-" + i)).isTrue();
      }
      assertThat(k8s.requestCount("create", "pods/binding")).isEqualTo(4);
      assertThat(List.of(r.result().warnings().toArray(new String[0])))
          .anySatisfy(w -> assertThat(w).contains("only one strategy runs"));
    }
  }

  @Test
  void simulatingTheDevicePluginNeedsAKubeconfig() {
    GangDemoTest.Run r = GangDemoTest.run("--simulate-device-plugin");
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(r.err()).contains("--simulate-device-plugin needs --kubeconfig");
  }
}
