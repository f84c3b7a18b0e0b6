package dev.hamilock.examples.gang;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.examples.gang.input.InputLoader;
import dev.hamilock.examples.gang.run.MemberResult;
import dev.hamilock.examples.gang.run.ModeResult;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gang demo against a cluster reached only through its kubeconfig (issue 14, item 5): {@code
 * --kubeconfig <backend's kubeconfig> --yes --simulate-device-plugin}, on the real kube-apiserver
 * ({@code -Preal-apiserver}) and on the emulator. The cluster has no GPUs and no HAMi device
 * plugin, so the demo plays the plugin itself. The guide's gang (4 members, 1 GPU / 3000 MiB / 30 %
 * each) and the two built-in GPU nodes are created first — under fresh names, in a fresh namespace,
 * per run — then the gang run and, on a second fresh copy, the fail-fast run (a real cluster runs
 * one strategy per invocation, the pods are bound afterwards): 4/4 bound, no overlapping slices,
 * holds on a node never overlap, no lock left, gang faster to fully bound.
 */
class GangDemoOnBackendsTest {
  @TempDir Path tmp;

  @BackendTest
  void theGangDemoBindsTheGuideGangThroughTheKubeconfigFasterThanFailFast(KubeBackend k8s)
      throws Exception {
    ModeResult gang = run(k8s, "gang");
    ModeResult failFast = run(k8s, "fail-fast");
    System.out.printf(
        "[%s] gang demo via --kubeconfig: gang %.1f ms to bound (%.1f ms to allocated), fail-fast %.1f ms "
            + "to bound; ratio %.1fx%n",
        k8s.kind().label(),
        gang.timeToBoundMs().orElseThrow(),
        gang.timeToAllocatedMs().orElseThrow(),
        failFast.timeToBoundMs().orElseThrow(),
        failFast.timeToBoundMs().orElseThrow() / gang.timeToBoundMs().orElseThrow());
    assertThat(gang.timeToBoundMs().orElseThrow())
        .isLessThan(failFast.timeToBoundMs().orElseThrow());
  }

  private ModeResult run(KubeBackend k8s, String mode) throws Exception {
    String id = "demo-" + UUID.randomUUID().toString().substring(0, 8);
    Path manifests = tmp.resolve(id + ".yaml");
    Files.writeString(
        manifests,
        resource(InputLoader.BUILT_IN_GANG).replace("namespace: default", "namespace: " + id)
            + "\n---\n"
            + resource(InputLoader.BUILT_IN_NODES)
                .replace("name: node-a", "name: " + id + "-node-a")
                .replace("name: node-b", "name: " + id + "-node-b"));
    DemoInput input = new InputLoader(VendorRegistry.discover()).load(List.of(manifests));
    k8s.createNamespace(id);
    awaitDefaultServiceAccount(k8s, id);
    input.nodes().forEach(n -> k8s.create(n.object()));
    input
        .pods()
        .forEach(
            p ->
                k8s.create(
                    p.object())); // PodGroups: no CRD on a bare API server; read from the file

    GangDemoTest.Run r =
        GangDemoTest.run(
            "--kubeconfig",
            k8s.kubeconfigFile().toString(),
            "--yes",
            "--simulate-device-plugin",
            "--manifests",
            manifests.toString(),
            "--mode",
            mode);
    assertThat(r.result().exitCode()).as(r.out() + r.err()).isEqualTo(GangDemo.EXIT_OK);
    assertThat(r.result().plan())
        .anySatisfy(l -> assertThat(l).contains("will POST pods/gang-worker-1/binding in " + id))
        .anySatisfy(l -> assertThat(l).contains("released by the simulated device plugin"));
    assertThat(r.out())
        .contains("API requests by verb: not counted (a cluster reached by --kubeconfig)")
        .contains("overlap check: OK");
    ModeResult m = (mode.equals("gang") ? r.result().gang() : r.result().failFast()).orElseThrow();
    assertThat(m.backend()).contains("simulated device plugin per node");
    assertThat(m.members()).hasSize(4).allMatch(MemberResult::bound);
    assertThat(m.violations()).isEmpty();
    assertThat(m.locksLeft()).isEmpty();
    java.util.Map<String, List<dev.hamilock.examples.gang.run.LockTimeline.Hold>> byNode =
        new java.util.TreeMap<>();
    m.holds()
        .forEach(
            h ->
                byNode
                    .computeIfAbsent(h.node() + " " + h.key(), k -> new java.util.ArrayList<>())
                    .add(h));
    assertThat(m.holds()).hasSizeGreaterThanOrEqualTo(4);
    byNode
        .values()
        .forEach(
            hs -> { // holds of one lock never overlap
              hs.sort(
                  java.util.Comparator.comparingDouble(
                      dev.hamilock.examples.gang.run.LockTimeline.Hold::acquiredMs));
              for (int i = 1; i < hs.size(); i++) {
                assertThat(hs.get(i).acquiredMs())
                    .isGreaterThanOrEqualTo(hs.get(i - 1).releasedMs().orElseThrow());
              }
            });
    for (int i = 1; i <= 4; i++) { // the server's own view
      assertThat(
              k8s.get("pods", id, "gang-worker-" + i)
                  .orElseThrow()
                  .path("spec")
                  .path("nodeName")
                  .asText())
          .startsWith(id + "-node-");
    }
    for (String node : List.of(id + "-node-a", id + "-node-b")) {
      assertThat(
              k8s.get("nodes", null, node)
                  .orElseThrow()
                  .path("metadata")
                  .path("annotations")
                  .has("hami.io/mutex.lock"))
          .as("lock left on %s", node)
          .isFalse();
    }
    return m;
  }

  private static String resource(String name) throws Exception {
    try (InputStream in =
        InputLoader.class.getResourceAsStream("/dev/hamilock/examples/gang/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /**
   * The real server's ServiceAccount admission refuses pods until the namespace's default account
   * exists.
   */
  private static void awaitDefaultServiceAccount(KubeBackend k8s, String ns) throws Exception {
    if (k8s.kind() != KubeBackend.Kind.REAL) {
      return;
    }
    CoreV1Api api = new CoreV1Api(k8s.apiClient());
    for (int i = 0; ; i++) {
      try {
        api.readNamespacedServiceAccount("default", ns).execute();
        return;
      } catch (ApiException e) {
        if (e.getCode() != 404 || i > 600) {
          throw e;
        }
        Thread.sleep(50);
      }
    }
  }
}
