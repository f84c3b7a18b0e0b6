package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes' own pod requests, as a judge for tests: the {@code podrequests} command of {@code
 * testing/realcluster} (built by {@code testing/realcluster/build} next to the {@link
 * RealApiServer} launcher, from the same go.mod, so at the control plane's version) prints {@code
 * resource.PodRequests(pod, PodResourcesOptions{ExcludeOverhead: true})} of {@code
 * k8s.io/component-helpers/resource} — the rule kube-scheduler's NodeResourcesFit and the kubelet's
 * admission use, native sidecars included — for each pod given as JSON.
 *
 * <p>The binary is {@code -Dhamilock.podrequests.bin} (default {@value #DEFAULT_BINARY}, resolved
 * from the repository root as {@link RealApiServer} does). {@link #locate()} checks that it exists,
 * answers {@code --version} and is newer than go.mod, go.sum and its sources.
 */
public final class KubernetesPodRequests {
  /** System property naming the binary. */
  public static final String BINARY_PROPERTY = "hamilock.podrequests.bin";

  /** Default binary, relative to the repository root. */
  public static final String DEFAULT_BINARY = "testing/realcluster/bin/podrequests";

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Pattern VERSION_LINE =
      Pattern.compile("podrequests k8s\\.io/component-helpers (\\S+) k8s\\.io/api (\\S+)");

  private final Path binary;
  private final String componentHelpersVersion;

  private KubernetesPodRequests(Path binary, String componentHelpersVersion) {
    this.binary = binary;
    this.componentHelpersVersion = componentHelpersVersion;
  }

  /**
   * @throws RealApiServerException if it is missing, not executable, does not answer {@code
   *     --version} as expected, or is older than {@code testing/realcluster/go.mod}, {@code go.sum}
   *     or {@code cmd/podrequests/*.go} (the message says to run {@code testing/realcluster/build})
   */
  public static KubernetesPodRequests locate() {
    return locate(Path.of(System.getProperty(BINARY_PROPERTY, DEFAULT_BINARY)));
  }

  static KubernetesPodRequests locate(Path configured) {
    Optional<Path> root = RealApiServer.repositoryRoot(Path.of(System.getProperty("user.dir")));
    Path bin = RealApiServer.resolveBinary(configured, root);
    if (!Files.isExecutable(bin)) {
      throw new RealApiServerException(
          "no executable podrequests binary at "
              + bin
              + " (-D"
              + BINARY_PROPERTY
              + "): "
              + RealApiServer.BUILD_HINT
              + " ("
              + RealApiServer.goHint()
              + ")");
    }
    Run v = run(bin, List.of("--version"), "");
    Matcher m = VERSION_LINE.matcher(v.stdout.trim());
    if (v.exit != 0 || !m.matches()) {
      throw new RealApiServerException(
          "stale or foreign podrequests binary "
              + bin
              + ": --version printed \""
              + v.stdout.trim()
              + v.stderr.trim()
              + "\": "
              + RealApiServer.BUILD_HINT);
    }
    root.ifPresent(r -> checkFresh(bin, r.resolve("testing/realcluster")));
    return new KubernetesPodRequests(bin, m.group(1));
  }

  private static void checkFresh(Path bin, Path module) {
    try {
      Optional<Path> changed =
          RealApiServer.changedSource(bin, module, module.resolve("cmd/podrequests"));
      if (changed.isPresent()) {
        throw new RealApiServerException(
            "stale podrequests binary "
                + bin
                + ": "
                + changed.get()
                + " changed after it was built: "
                + RealApiServer.BUILD_HINT);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + module + ": " + e.getMessage(), e);
    }
  }

  /**
   * @return the version of {@code k8s.io/component-helpers} the binary was built with, e.g. {@code
   *     v0.37.2} (Kubernetes v1.37.2)
   */
  public String componentHelpersVersion() {
    return componentHelpersVersion;
  }

  /**
   * Kubernetes' {@code PodRequests} (overhead excluded) of each pod, in one run of the binary.
   *
   * @param pods v1 Pod objects as JSON (e.g. as the API server stored them)
   * @return one map per pod, in the same order: resource name to the pod's request (exact decimal,
   *     e.g. {@code nvidia.com/gpumem} 16000 for 16000 MiB, {@code cpu} 0.5); resources the pod
   *     does not request are absent
   * @throws IllegalStateException if the binary fails (its {@code error:} line is included) or
   *     answers for other pods than asked
   */
  public List<Map<String, BigDecimal>> requests(List<JsonNode> pods) {
    StringBuilder in = new StringBuilder();
    for (JsonNode p : pods) {
      in.append(p.toString()).append('\n');
    }
    Run r = run(binary, List.of(), in.toString());
    if (r.exit != 0) {
      throw new IllegalStateException(
          binary + " exited " + r.exit + " for " + pods.size() + " pods: " + r.stderr.trim());
    }
    List<Map<String, BigDecimal>> out = new ArrayList<>(pods.size());
    String[] lines = r.stdout.isEmpty() ? new String[0] : r.stdout.split("\n");
    if (lines.length != pods.size()) {
      throw new IllegalStateException(
          binary + " answered " + lines.length + " lines for " + pods.size() + " pods");
    }
    for (int i = 0; i < lines.length; i++) {
      JsonNode answer;
      try {
        answer = MAPPER.readTree(lines[i]);
      } catch (IOException e) {
        throw new IllegalStateException(binary + " answered non-JSON line: " + lines[i], e);
      }
      JsonNode meta = pods.get(i).path("metadata");
      if (!answer.path("namespace").asText().equals(meta.path("namespace").asText())
          || !answer.path("name").asText().equals(meta.path("name").asText())) {
        throw new IllegalStateException(
            binary + " answered for another pod at #" + i + ": " + lines[i]);
      }
      Map<String, BigDecimal> requests = new TreeMap<>();
      answer
          .path("requests")
          .properties()
          .forEach(e -> requests.put(e.getKey(), new BigDecimal(e.getValue().asText())));
      out.add(Collections.unmodifiableMap(requests));
    }
    return out;
  }

  private record Run(int exit, String stdout, String stderr) {}

  private static Run run(Path bin, List<String> args, String stdin) {
    List<String> cmd = new ArrayList<>();
    cmd.add(bin.toString());
    cmd.addAll(args);
    try {
      Process p = new ProcessBuilder(cmd).start();
      CompletableFuture<String> err =
          CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
      CompletableFuture<Void> writer =
          CompletableFuture.runAsync(
              () -> {
                try (OutputStream o = p.getOutputStream()) {
                  o.write(stdin.getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
      String out = readAll(p.getInputStream());
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(bin + " did not end within 120 s");
      }
      writer.join();
      return new Run(p.exitValue(), out, err.join());
    } catch (IOException e) {
      throw new RealApiServerException(
          "cannot run " + bin + " (" + e.getMessage() + "): " + RealApiServer.BUILD_HINT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + bin, e);
    }
  }

  private static String readAll(InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
