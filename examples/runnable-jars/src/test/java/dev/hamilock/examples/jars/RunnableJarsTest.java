package dev.hamilock.examples.jars;

import static dev.hamilock.examples.jars.Jars.BENCHMARKS;
import static dev.hamilock.examples.jars.Jars.DOCTOR;
import static dev.hamilock.examples.jars.Jars.EXTENDER;
import static dev.hamilock.examples.jars.Jars.GANG_DEMO;
import static dev.hamilock.examples.jars.Jars.GUIDE;
import static dev.hamilock.examples.jars.Jars.PREFLIGHT;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.ApiServerEmulator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every runnable jar run as its README runs it: {@code java -jar} in its own process, on its main
 * paths, against the API emulator (a kubeconfig file naming it) where the jar talks to a cluster.
 * The jars' own module tests run their code on Maven's class path, which hid a missing class from
 * the doctor jar (issue 24 item 2); these run the shaded jar as shipped.
 */
class RunnableJarsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration LIMIT = Duration.ofMinutes(3);
  private static final String LOCK = "hami.io/mutex.lock";

  @TempDir Path tmp;

  // ------------------------------------------------------------------------- gang demo

  @Test
  void gangDemoBindsTheGuidesGangOnItsEmbeddedEmulator() {
    Jars.Run r = Jars.run(LIMIT, GANG_DEMO, "--mode", "gang");
    assertThat(r.exit()).as(r.all()).isZero();
    assertThat(r.out()).contains("4/4 pods bound", "overlap check: OK");
  }

  @Test
  void gangDemoBindsTheGangOnAClusterGivenByKubeconfig() throws IOException {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Jars.seed(k8s, GUIDE + "nodes.yaml");
      Jars.seed(k8s, GUIDE + "gang-training.yaml");
      Jars.Run r =
          Jars.run(
              LIMIT,
              GANG_DEMO,
              "--kubeconfig",
              Jars.kubeconfig(k8s, tmp).toString(),
              "--yes",
              "--simulate-device-plugin",
              "--mode",
              "gang");
      assertThat(r.exit()).as(r.all()).isZero();
      for (int i = 1; i <= 4; i++) {
        assertThat(
                k8s.get("pods", "default", "gang-worker-" + i)
                    .orElseThrow()
                    .at("/spec/nodeName")
                    .asText())
            .as("gang-worker-%d bound", i)
            .isIn("node-a", "node-b");
      }
    }
  }

  // ------------------------------------------------------------------------- extender

  @Test
  void extenderServesFilterAndBindForAClusterGivenByKubeconfigAndStopsOnSigterm() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Jars.seed(k8s, GUIDE + "nodes.yaml");
      Jars.seed(k8s, GUIDE + "gang-training.yaml");
      Process p =
          Jars.start(EXTENDER, "--kubeconfig", Jars.kubeconfig(k8s, tmp).toString(), "--port", "0");
      try {
        String base = listeningUrl(p);
        HttpClient http = HttpClient.newHttpClient();
        assertThat(awaitReady(http, base)).as("/readyz").isEqualTo(200);
        ObjectNode filter = JSON.createObjectNode();
        filter.set("Pod", k8s.get("pods", "default", "gang-worker-1").orElseThrow());
        filter.putArray("NodeNames").add("node-a").add("node-b");
        JsonNode filtered = JSON.readTree(post(http, base + "/filter", filter));
        assertThat(filtered.path("Error").asText()).isEmpty();
        assertThat(filtered.path("NodeNames")).extracting(JsonNode::asText).contains("node-a");
        ObjectNode bind =
            JSON.createObjectNode()
                .put("PodName", "gang-worker-1")
                .put("PodNamespace", "default")
                .put(
                    "PodUID",
                    k8s.get("pods", "default", "gang-worker-1")
                        .orElseThrow()
                        .at("/metadata/uid")
                        .asText())
                .put("Node", "node-a");
        JsonNode bound = JSON.readTree(post(http, base + "/bind", bind));
        assertThat(bound.path("Error").asText()).as(bound.toString()).isEmpty();
        assertThat(
                k8s.get("pods", "default", "gang-worker-1")
                    .orElseThrow()
                    .at("/spec/nodeName")
                    .asText())
            .isEqualTo("node-a");
      } finally {
        p.destroy(); // SIGTERM, as kubelet stops the container
        assertThat(p.waitFor(LIMIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  /** Reads the extender's log until its "listening on http://127.0.0.1:PORT" line. */
  private static String listeningUrl(Process p) throws IOException {
    p.getInputStream().close(); // nothing on stdout; the log is on stderr
    BufferedReader err =
        new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
    Pattern listening = Pattern.compile("listening on (http://[0-9.]+:[0-9]+)");
    List<String> seen = new ArrayList<>();
    for (String line; (line = err.readLine()) != null; ) {
      seen.add(line);
      Matcher m = listening.matcher(line);
      if (m.find()) {
        Thread drain = new Thread(() -> drain(err), "extender log");
        drain.setDaemon(true); // keeps the pipe drained
        drain.start();
        return m.group(1);
      }
    }
    throw new AssertionError("the extender ended without listening: " + String.join("\n", seen));
  }

  /** Reads until the process ends; its pipe closed under the reader is an end too. */
  private static void drain(BufferedReader err) {
    try {
      while (err.readLine() != null) {
        // discard: keeps the pipe from filling up
      }
    } catch (IOException closed) {
      // the stream was closed when the process was destroyed
    }
  }

  private static int awaitReady(HttpClient http, String base) throws Exception {
    int status = 0;
    for (int i = 0; i < 300 && status != 200; i++) {
      status =
          http.send(
                  HttpRequest.newBuilder(URI.create(base + "/readyz")).build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode();
      if (status != 200) {
        Thread.sleep(100);
      }
    }
    return status;
  }

  private static String post(HttpClient http, String url, JsonNode body) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(url + ": " + r.body()).isEqualTo(200);
    return r.body();
  }

  // ------------------------------------------------------------------------- preflight

  @Test
  void preflightPassesTheExtenderDeployDirectoryAndReportsAPitfall() throws IOException {
    Jars.Run deploy = Jars.run(LIMIT, PREFLIGHT, "examples/extender/deploy/");
    assertThat(deploy.exit()).as(deploy.all()).isZero();
    String pitfall =
        "examples/gang-demo/src/test/resources/pitfalls/annotation-instead-of-label.yaml";
    Jars.Run text = Jars.run(LIMIT, PREFLIGHT, pitfall);
    assertThat(text.exit()).as(text.all()).isEqualTo(1);
    assertThat(text.out()).contains("PF05");
    Jars.Run json = Jars.run(LIMIT, PREFLIGHT, "--json", pitfall);
    assertThat(json.exit()).as(json.all()).isEqualTo(1);
    assertThat(JSON.readTree(json.out()).toString()).contains("PF05");
  }

  @Test
  void preflightJudgesEachSubDirectoryAsASetUpAndReadsHelmTemplateOutput() throws IOException {
    String helm = "tools/hami-lock-preflight/src/test/resources/helm/";
    Path deploy = tmp.resolve("deploy");
    Path guide = tmp.resolve("guide");
    Path chart = tmp.resolve("chart");
    for (Path d : List.of(deploy, guide, chart)) {
      Files.createDirectories(d);
    }
    for (String f : List.of("10-rbac.yaml", "20-scheduler-config.yaml", "30-deployment.yaml")) {
      Files.copy(Jars.ROOT.resolve("examples/extender/deploy/" + f), deploy.resolve(f));
    }
    // the guide's gang names profile "hami-scheduler" as the example's configuration does
    Files.copy(
        Jars.ROOT.resolve("tools/hami-lock-preflight/src/test/resources/guide/gang-training.yaml"),
        guide.resolve("gang-training.yaml"));
    Files.copy(
        Jars.ROOT.resolve(
            "tools/hami-lock-preflight/src/test/resources/guide/scheduler-config.yaml"),
        guide.resolve("scheduler-config.yaml"));
    Files.copy(Jars.ROOT.resolve(helm + "hami-render-retry-30s.yaml"), chart.resolve("all.yaml"));

    Jars.Run r = Jars.run(LIMIT, PREFLIGHT, tmp.toString());
    assertThat(r.exit()).as(r.all()).isEqualTo(1);
    assertThat(r.out())
        .as(r.all())
        .startsWith("SET-UP " + chart + "\nSEVERITY")
        .contains(chart.resolve("all.yaml") + "#9 spec.template.spec.containers[1].command[10]")
        .doesNotContain("PF02", deploy.toString(), guide.toString());
    Jars.Run clean = Jars.run(LIMIT, PREFLIGHT, helm + "hami-render.yaml");
    assertThat(clean.exit()).as(clean.all()).isZero();
    assertThat(clean.out()).isEqualTo("No findings (1 file, 7 documents).\n");
  }

  // ------------------------------------------------------------------------- doctor

  @Test
  void doctorReadsLocksAndDiagnosesAClusterWithNvidiaRegistrations() throws IOException {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      // node-a: two A40s in HAMi's colon form, node-b: one card in the JSON form (real values)
      Jars.seed(k8s, GUIDE + "nodes.yaml");
      Jars.seed(k8s, GUIDE + "gang-training.yaml");
      k8s.mutate(
          "nodes",
          null,
          "node-a",
          o -> {
            o.withObjectProperty("metadata")
                .withObjectProperty("annotations")
                .put(
                    LOCK,
                    java.time.Instant.now().toString().replaceAll("\\.\\d+Z$", "Z")
                        + ",default,gang-worker-1");
            return o;
          });
      String kubeconfig = Jars.kubeconfig(k8s, tmp).toString();

      Jars.Run locks = Jars.run(LIMIT, DOCTOR, "--kubeconfig", kubeconfig, "locks");
      assertThat(locks.exit()).as(locks.all()).isIn(0, 1);
      assertThat(locks.err()).isEmpty();
      assertThat(locks.out()).contains("node-a", "node-b", "held", "default/gang-worker-1");

      Jars.Run json = Jars.run(LIMIT, DOCTOR, "--kubeconfig", kubeconfig, "--json", "locks");
      assertThat(json.exit()).as(json.all()).isIn(0, 1);
      JsonNode report = JSON.readTree(json.out());
      assertThat(report.toString()).contains("node-a", "node-b", "gang-worker-1");

      Jars.Run diagnose = Jars.run(LIMIT, DOCTOR, "--kubeconfig", kubeconfig, "diagnose");
      assertThat(diagnose.exit()).as(diagnose.all()).isIn(0, 1);
      assertThat(diagnose.err()).isEmpty();
      assertThat(diagnose.out()).contains("diagnose:").doesNotContain("Exception");
    }
  }

  /**
   * With no kubeconfig anywhere, client-java's default resolution would talk to {@code
   * localhost:8080} without a word (found by a new user's run): the doctor names what it looked for
   * and exits 2.
   */
  @Test
  void doctorWithNoKubeconfigAnywhereSaysSoInsteadOfUsingLocalhost8080() {
    Jars.Run run =
        Jars.run(
            LIMIT,
            java.util.Map.of(
                "KUBECONFIG",
                "",
                "KUBERNETES_SERVICE_HOST",
                "",
                "JAVA_TOOL_OPTIONS",
                "-Duser.home=" + tmp),
            DOCTOR,
            "locks");
    assertThat(run.exit()).as(run.all()).isEqualTo(2);
    assertThat(run.err())
        .contains("none found", "--kubeconfig FILE")
        .doesNotContain("localhost", "Exception");
  }

  /**
   * A {@code --kubeconfig} that is not there: the doctor says why it cannot read it (a new user's
   * {@code --kubeconfig /tmp/nope.yaml} got only "cannot read kubeconfig /tmp/nope.yaml"), as the
   * extender does, and exits 2 before printing any table.
   */
  @Test
  void doctorNamesWhyItCannotReadTheKubeconfig() {
    Path missing = tmp.resolve("nope.yaml");
    Jars.Run run = Jars.run(LIMIT, DOCTOR, "--kubeconfig", missing.toString(), "locks");
    assertThat(run.exit()).as(run.all()).isEqualTo(2);
    assertThat(run.err())
        .contains("hami-lock-doctor: cannot read kubeconfig " + missing + ": no such file")
        .doesNotContain("Exception");
    assertThat(run.out()).isEmpty();
  }

  /**
   * With no kubeconfig anywhere and the default {@code --port 8080}, client-java's fallback API
   * server {@code http://localhost:8080} would be the extender itself (found by a new user's run:
   * its watches failed with HTTP 404 against its own port): it refuses to start and says why.
   */
  @Test
  void extenderWithNoKubeconfigAnywhereRefusesToBeItsOwnApiServer() {
    Jars.Run run =
        Jars.run(
            LIMIT,
            java.util.Map.of(
                "KUBECONFIG",
                "",
                "KUBERNETES_SERVICE_HOST",
                "",
                "JAVA_TOOL_OPTIONS",
                "-Duser.home=" + tmp),
            EXTENDER);
    assertThat(run.exit()).as(run.all()).isEqualTo(1);
    assertThat(run.err())
        .contains("http://localhost:8080, which is this extender's own --port 8080", "--kubeconfig")
        .doesNotContain("Exception");
  }

  /**
   * {@code audit} on the doctor README's seeded cluster (its objects in the doctor's test
   * resources) prints the README's sample, ports normalised; exit 1 for its findings.
   */
  @Test
  void doctorAuditFindsTheSeededOverCommitAndPrintsTheReadmeSample() throws IOException {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Jars.seed(k8s, "tools/hami-lock-doctor/src/test/resources/audit/seeded-cluster.yaml");
      String kubeconfig = Jars.kubeconfig(k8s, tmp).toString();

      Jars.Run audit = Jars.run(LIMIT, DOCTOR, "--kubeconfig", kubeconfig, "audit");
      assertThat(audit.exit()).as(audit.all()).isEqualTo(1);
      assertThat(audit.err()).isEmpty();
      String readme =
          java.nio.file.Files.readString(Jars.ROOT.resolve("tools/hami-lock-doctor/README.md"));
      String begin = "<!-- doctor-audit-output: begin -->\n```\n";
      String sample =
          readme.substring(
              readme.indexOf(begin) + begin.length(),
              readme.indexOf("```\n<!-- doctor-audit-output: end -->"));
      assertThat(readme).contains(begin);
      assertThat(audit.out().replace(k8s.url(), "https://127.0.0.1:6443")).isEqualTo(sample);

      Jars.Run json = Jars.run(LIMIT, DOCTOR, "--kubeconfig", kubeconfig, "--json", "audit");
      assertThat(json.exit()).as(json.all()).isEqualTo(1);
      JsonNode report = JSON.readTree(json.out());
      assertThat(report.path("command").asText()).isEqualTo("audit");
      assertThat(report.path("findings").findValuesAsText("check"))
          .containsExactly("AU01", "AU03", "AU04");
    }
  }

  /**
   * {@code preempt} for a gang member on the doctor's gang cluster (its objects in the doctor's
   * test resources): the whole gang planned, the README's sample printed; a gang no plan places
   * says so.
   */
  @Test
  void doctorPreemptPlansAGangMembersWholeGangAndPrintsTheReadmeSample() throws IOException {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Jars.seed(k8s, "tools/hami-lock-doctor/src/test/resources/preempt/gang-cluster.yaml");
      String kubeconfig = Jars.kubeconfig(k8s, tmp).toString();

      Jars.Run gang =
          Jars.run(LIMIT, DOCTOR, "--kubeconfig", kubeconfig, "preempt", "default/train-0");
      assertThat(gang.exit()).as(gang.all()).isZero();
      assertThat(gang.err()).isEmpty();
      String readme =
          java.nio.file.Files.readString(Jars.ROOT.resolve("tools/hami-lock-doctor/README.md"));
      String begin = "<!-- doctor-preempt-gang-output: begin -->\n```\n";
      assertThat(readme).contains(begin);
      assertThat(gang.out())
          .isEqualTo(
              readme.substring(
                  readme.indexOf(begin) + begin.length(),
                  readme.indexOf("```\n<!-- doctor-preempt-gang-output: end -->")));

      Jars.Run none =
          Jars.run(LIMIT, DOCTOR, "--kubeconfig", kubeconfig, "preempt", "default/big-0");
      assertThat(none.exit()).as(none.all()).isZero();
      assertThat(none.out())
          .contains("gang big: 3 pending member(s)): no plan places every member");
    }
  }

  // ------------------------------------------------------------------------- benchmarks

  @Test
  void benchmarksRunTheirSmallestScenarioAndWriteTheReport() throws IOException {
    Path out = tmp.resolve("results");
    Jars.Run r =
        Jars.run(
            LIMIT,
            BENCHMARKS,
            "--quick",
            "--skip-jmh",
            "--only",
            "N=2",
            "--algorithm",
            "ours-watch",
            "--out",
            out.toString());
    assertThat(r.exit()).as(r.all()).isZero();
    assertThat(out.resolve("results.md")).isRegularFile();
    assertThat(java.nio.file.Files.readString(out.resolve("results.csv"))).contains("ours-watch");
  }

  // ------------------------------------------------------------------------- licences

  @Test
  void everyRunnableJarCarriesTheLicenceAndListsEachBundledArtifactWithItsLicence()
      throws IOException {
    String apache = java.nio.file.Files.readString(Jars.ROOT.resolve("LICENSE"));
    assertThat(apache).contains("Apache License", "Version 2.0, January 2004");
    for (String jar :
        List.of(
            GANG_DEMO,
            EXTENDER,
            PREFLIGHT,
            DOCTOR,
            BENCHMARKS,
            "testing/hami-lock-testkit/target/hami-lock-testkit-0.1.0-SNAPSHOT-all.jar")) {
      try (JarFile f = new JarFile(Jars.ROOT.resolve(jar).toFile())) {
        assertThat(text(f, "META-INF/LICENSE-hami-lock.txt")).as(jar).isEqualTo(apache);
        String thirdParty = text(f, "META-INF/THIRD-PARTY.txt");
        List<String> bundled =
            f.stream()
                .map(JarEntry::getName)
                .filter(n -> n.startsWith("META-INF/maven/") && n.endsWith("/pom.properties"))
                .map(n -> coordinates(f, n))
                .filter(c -> !c.startsWith("dev.hamilock:"))
                .toList();
        assertThat(bundled).as(jar).isNotEmpty();
        for (String c : bundled) {
          assertThat(thirdParty).as("%s lists %s", jar, c).contains("(" + c + ":");
        }
      }
    }
  }

  private static String coordinates(JarFile f, String pomProperties) {
    Properties p = new Properties();
    try {
      p.load(f.getInputStream(f.getEntry(pomProperties)));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return p.getProperty("groupId") + ":" + p.getProperty("artifactId");
  }

  private static String text(JarFile f, String entry) throws IOException {
    JarEntry e = f.getJarEntry(entry);
    assertThat(e).as("%s in %s", entry, f.getName()).isNotNull();
    return new String(f.getInputStream(e).readAllBytes(), StandardCharsets.UTF_8);
  }
}
