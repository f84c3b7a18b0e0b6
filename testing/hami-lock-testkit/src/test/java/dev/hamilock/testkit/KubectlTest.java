package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An outside client nobody here wrote: the installed kubectl binaries (oldest and newest of the
 * {@code kubectl.1.NN} siblings of the real kubectl on the PATH) drive the emulator over plain HTTP
 * with a generated kubeconfig; results are asserted through client-java. When no kubectl is
 * installed the test is aborted (reported as skipped) with a message naming what is missing.
 */
class KubectlTest {
  private static final String P = "/metadata/annotations/hami.io~1mutex.lock";
  private static final String ACQUIRE =
      "[{\"op\":\"test\",\"path\":\""
          + P
          + "\",\"value\":null},"
          + "{\"op\":\"add\",\"path\":\""
          + P
          + "\",\"value\":\"me\"}]";

  record Result(int exit, String out, String err) {}

  static Optional<Path> kubectlOnPath() {
    String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
    for (String dir : path.split(File.pathSeparator)) {
      Path p = Path.of(dir, "kubectl");
      if (Files.isExecutable(p)) {
        try {
          return Optional.of(p.toRealPath());
        } catch (IOException e) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  /** The oldest and newest versioned kubectl beside the real binary, else the plain one. */
  static Stream<Path> binaries() {
    Optional<Path> real = kubectlOnPath();
    if (real.isEmpty()) {
      return Stream.of(Path.of("kubectl-not-found-on-PATH"));
    }
    List<Path> versioned = new ArrayList<>();
    try (Stream<Path> s = Files.list(real.get().getParent())) {
      s.filter(
              p ->
                  p.getFileName().toString().matches("kubectl\\.1\\.\\d+") && Files.isExecutable(p))
          .forEach(versioned::add);
    } catch (IOException e) {
      return Stream.of(real.get());
    }
    if (versioned.isEmpty()) {
      return Stream.of(real.get());
    }
    versioned.sort(
        Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString().substring(10))));
    Path oldest = versioned.get(0);
    Path newest = versioned.get(versioned.size() - 1);
    return oldest.equals(newest) ? Stream.of(oldest) : Stream.of(oldest, newest);
  }

  private static Result run(Path kubectl, Path kubeconfig, Path cache, String... args)
      throws IOException, InterruptedException {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                kubectl.toString(),
                "--kubeconfig",
                kubeconfig.toString(),
                "--cache-dir",
                cache.toString(),
                "--request-timeout",
                "20s"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
    p.getOutputStream().close();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("kubectl did not finish within 60 s: " + cmd);
    }
    return new Result(
        p.exitValue(),
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
        new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  private static Result ok(Result r, String what) {
    assertThat(r.exit()).as("%s failed: stdout=%s stderr=%s", what, r.out(), r.err()).isZero();
    return r;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("binaries")
  void kubectlDrivesNodesAndPods(Path kubectl, @TempDir Path tmp) throws Exception {
    assumeTrue(
        Files.isExecutable(kubectl),
        () ->
            "SKIPPED LOUDLY: no kubectl binary found (looked for"
                + " 'kubectl' on PATH="
                + System.getenv("PATH")
                + " and kubectl.1.NN beside it); cannot run the"
                + " outside-client test");
    try (ApiServerEmulator emu = ApiServerEmulator.start()) {
      Path kc = tmp.resolve("kubeconfig");
      Files.writeString(kc, emu.kubeconfig());
      Path cache = tmp.resolve("cache");
      emu.createNode("node-a", Map.of("x", "y"));
      emu.createPod("default", "p1", Map.of("x", "y"));
      CoreV1Api api = new CoreV1Api(emu.apiClient());

      JsonNode nodes =
          Fx.MAPPER.readTree(
              ok(run(kubectl, kc, cache, "get", "nodes", "-o", "json"), "get nodes").out());
      assertThat(nodes.path("items").get(0).path("metadata").path("name").asText())
          .isEqualTo("node-a");
      assertThat(
              ok(run(kubectl, kc, cache, "get", "pods", "-n", "default", "-o", "name"), "get pods")
                  .out()
                  .trim())
          .isEqualTo("pod/p1");

      for (String[] target : new String[][] {{"node", "node-a"}, {"pod", "p1"}}) {
        String kind = target[0];
        String name = target[1];
        ok(
            run(kubectl, kc, cache, "-n", "default", "annotate", kind, name, "a=b"),
            "annotate " + kind);
        ok(run(kubectl, kc, cache, "-n", "default", "label", kind, name, "l=v"), "label " + kind);
        ok(
            run(
                kubectl,
                kc,
                cache,
                "-n",
                "default",
                "patch",
                kind,
                name,
                "--type=merge",
                "-p",
                "{\"metadata\":{\"annotations\":{\"m\":\"1\",\"x\":null}}}"),
            "merge patch " + kind);
        ok(
            run(
                kubectl,
                kc,
                cache,
                "-n",
                "default",
                "patch",
                kind,
                name,
                "--type=json",
                "-p",
                ACQUIRE),
            "json patch acquire " + kind);
        Result busy =
            run(
                kubectl,
                kc,
                cache,
                "-n",
                "default",
                "patch",
                kind,
                name,
                "--type=json",
                "-p",
                ACQUIRE);
        assertThat(busy.exit()).as("second acquire must fail").isNotZero();
        assertThat(busy.err())
            .contains("the server rejected our request due to an error in our request");
        Map<String, String> ann;
        Map<String, String> labels;
        if (kind.equals("node")) {
          V1Node n = api.readNode(name).execute();
          ann = n.getMetadata().getAnnotations();
          labels = n.getMetadata().getLabels();
        } else {
          V1Pod p = api.readNamespacedPod(name, "default").execute();
          ann = p.getMetadata().getAnnotations();
          labels = p.getMetadata().getLabels();
        }
        assertThat(ann)
            .containsEntry("a", "b")
            .containsEntry("m", "1")
            .containsEntry("hami.io/mutex.lock", "me")
            .doesNotContainKey("x");
        assertThat(labels).containsEntry("l", "v");
      }
      assertThat(emu.requestCount("patch", "nodes")).isGreaterThanOrEqualTo(5);

      ok(run(kubectl, kc, cache, "-n", "default", "delete", "pod", "p1"), "delete pod");
      ok(run(kubectl, kc, cache, "delete", "node", "node-a"), "delete node");
      assertThat(status(() -> api.readNode("node-a").execute())).isEqualTo(404);
      assertThat(status(() -> api.readNamespacedPod("p1", "default").execute())).isEqualTo(404);
    }
  }

  interface Call {
    Object run() throws ApiException;
  }

  private static int status(Call c) {
    try {
      c.run();
      return 200;
    } catch (ApiException e) {
      return e.getCode();
    }
  }
}
