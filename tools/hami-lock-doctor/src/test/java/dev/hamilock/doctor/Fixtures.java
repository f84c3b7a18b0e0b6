package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.KubeBackend;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.yaml.snakeyaml.Yaml;

/** Objects on a test API server, made by the library's own flows where a flow exists. */
final class Fixtures {

  /** Two 46068 MiB A40s, HAMi's colon registration format (as the gang demo's nodes). */
  static final String REGISTRATION =
      "GPU-03f69c50-207a-2038-9b45-23cac89cb67d,10,46068,100,NVIDIA-NVIDIA A40,0,true:"
          + "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae,10,46068,100,NVIDIA-NVIDIA A40,0,true:";

  static final String LOCK = "hami.io/mutex.lock";
  private static final AtomicInteger SEQ = new AtomicInteger();

  private Fixtures() {}

  static String unique(String prefix) {
    return prefix + "-" + ProcessHandle.current().pid() % 10000 + "-" + SEQ.incrementAndGet();
  }

  static String gpuNode(KubeBackend k8s, String name) {
    k8s.createNode(
        name,
        Map.of(
            "hami.io/node-nvidia-register",
            REGISTRATION,
            "hami.io/node-handshake",
            "Requesting_2026-11-30 00:00:00"));
    return name;
  }

  /** A guide-style GPU pod (1 GPU, 3000 MiB, 30 %), scheduler hami-scheduler. */
  static void gpuPod(
      KubeBackend k8s,
      String ns,
      String name,
      Map<String, String> labels,
      Map<String, String> annotations,
      String image) {
    gpuPod(k8s, ns, name, labels, annotations, image, Map.of());
  }

  /** As the guide-style GPU pod, its one container also limited by {@code moreLimits}. */
  static void gpuPod(
      KubeBackend k8s,
      String ns,
      String name,
      Map<String, String> labels,
      Map<String, String> annotations,
      String image,
      Map<String, String> moreLimits) {
    Map<String, String> limits = new LinkedHashMap<>(moreLimits);
    limits.putAll(
        Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "3000", "nvidia.com/gpucores", "30"));
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("name", name);
    meta.put("namespace", ns);
    meta.put("labels", labels);
    meta.put("annotations", annotations);
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            meta,
            "spec",
            Map.of(
                "schedulerName",
                "hami-scheduler",
                "containers",
                List.of(
                    Map.of(
                        "name",
                        "worker",
                        "image",
                        image,
                        "command",
                        List.of("sleep", "3600"),
                        "resources",
                        Map.of("limits", limits))))));
  }

  /**
   * Writes what kube-scheduler's DynamicResources plugin writes before the Binding when it gives
   * the pod's {@code nvidia.com/gpu} through DRA: {@code status.extendedResourceClaimStatus}.
   */
  static void gpuViaDra(KubeBackend k8s, String ns, String pod) throws IOException {
    String status =
        "{'status':{'extendedResourceClaimStatus':{'resourceClaimName':'"
            + pod
            + "-extended-resources-x','requestMappings':[{'containerName':'worker',"
            + "'resourceName':'nvidia.com/gpu','requestName':'container-0-request-0'}]}}}";
    var client = k8s.newApiClient(Duration.ofSeconds(10));
    okhttp3.Request patch =
        new okhttp3.Request.Builder()
            .url(client.getBasePath() + "/api/v1/namespaces/" + ns + "/pods/" + pod + "/status")
            .patch(
                okhttp3.RequestBody.create(
                    status.replace('\'', '"'),
                    okhttp3.MediaType.get("application/merge-patch+json")))
            .build();
    try (okhttp3.Response resp = client.getHttpClient().newCall(patch).execute()) {
      assertThat(resp.code()).as("%s", resp.body().string()).isLessThan(300);
    }
  }

  static KubernetesHamiStack hami(KubeBackend k8s) {
    return KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
        .stack(s -> s.registry(VendorRegistry.discover()))
        .watch(false)
        .build();
  }

  /**
   * Binds through hami-lock's bind flow: the node lock stays held until the device plugin's
   * hand-off.
   */
  static BindResult bind(KubernetesHamiStack hami, String ns, String pod, String node) {
    BindResult r = hami.podBinder().bind(ns, pod, "", node);
    assertThat(r.isBound()).as("bind %s/%s to %s: %s", ns, pod, node, r.reason()).isTrue();
    return r;
  }

  /**
   * The device plugin's Allocate on the node: serves the pod named by the lock and releases the
   * lock.
   */
  static void allocate(KubernetesHamiStack hami, String node) {
    HandoffResult r = hami.devicePluginHandoff("NVIDIA").allocateAll(node);
    assertThat(r.status())
        .as("hand-off on %s: %s", node, r.reason())
        .isEqualTo(HandoffResult.Status.COMPLETED);
  }

  /** Creates every document of a guide file (optionally changed first). */
  @SuppressWarnings("unchecked")
  static void applyGuide(
      KubeBackend k8s, String file, Function<Map<String, Object>, Map<String, Object>> change) {
    try (InputStream in = Fixtures.class.getResourceAsStream("/guide/" + file)) {
      for (Object doc : new Yaml().loadAll(in)) {
        if (doc instanceof Map<?, ?> m) {
          Map<String, Object> changed = change.apply((Map<String, Object>) m);
          if (changed != null) {
            k8s.create(changed);
          }
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Map<String, Object> m, String key) {
    return (Map<String, Object>) m.computeIfAbsent(key, k -> new LinkedHashMap<>());
  }

  static Doctor doctor(KubeBackend k8s, Instant now) {
    return Doctor.builder(k8s.newApiClient(Duration.ofSeconds(10)))
        .clock(InstantSource.fixed(now))
        .lockTimeout(Duration.ofMinutes(5))
        .build();
  }

  /** Runs the command line against the backend; returns exit, stdout, stderr. */
  static Run run(KubeBackend k8s, Instant now, String... args) {
    return run(k8s, b -> b.clock(InstantSource.fixed(now)), args);
  }

  /** Runs the command line with the doctor's builder adjusted (5 min lock timeout). */
  static Run run(
      KubeBackend k8s, java.util.function.UnaryOperator<Doctor.Builder> adjust, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<String> all = new ArrayList<>(List.of("--kubeconfig", k8s.kubeconfigFile().toString()));
    all.addAll(List.of(args));
    int exit =
        DoctorCommand.run(
            all,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            DoctorCommand::client,
            b -> adjust.apply(b.lockTimeout(Duration.ofMinutes(5))));
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  record Run(int exit, String out, String err) {}

  static Optional<String> lockOn(KubeBackend k8s, String node) {
    return k8s.get("nodes", null, node)
        .map(n -> n.path("metadata").path("annotations").path(LOCK))
        .filter(v -> !v.isMissingNode())
        .map(v -> v.asText());
  }

  /** The fenced block between a README's {@code begin} and {@code end} markers. */
  static String readmeBlock(java.nio.file.Path readme, String begin, String end)
      throws IOException {
    String text = java.nio.file.Files.readString(readme, StandardCharsets.UTF_8);
    int b = text.indexOf(begin);
    int e = text.indexOf(end);
    assertThat(b).as("%s has the %s marker", readme, begin).isNotNegative();
    assertThat(e).as("%s has the %s marker after %s", readme, end, begin).isGreaterThan(b);
    String block = text.substring(b + begin.length(), e);
    return block.substring(block.indexOf("```\n") + 4, block.lastIndexOf("```"));
  }
}
