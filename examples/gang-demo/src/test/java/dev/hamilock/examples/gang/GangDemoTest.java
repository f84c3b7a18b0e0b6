package dev.hamilock.examples.gang;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.examples.gang.run.MemberResult;
import dev.hamilock.examples.gang.run.ModeResult;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The demo as a user runs it: {@link GangDemo#run} with a command line, checking the exit code, the
 * result and the printed report. The default run (no options but a timeline file) is made once.
 */
class GangDemoTest {

  /** Output of one in-process run. */
  record Run(DemoResult result, String out, String err) {}

  static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    DemoResult r =
        GangDemo.run(
            List.of(args),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(r, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static String pitfall(String name) {
    try {
      return Path.of(
              Objects.requireNonNull(GangDemoTest.class.getResource("/pitfalls/" + name), name)
                  .toURI())
          .toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @TempDir static Path tmp;
  static Path svg;
  static Run defaultRun;

  @BeforeAll
  static void defaultRun() {
    svg = tmp.resolve("timeline.svg");
    defaultRun = run("--timeline", svg.toString());
  }

  @Test
  void defaultRunBindsTheWholeGangSafelyAndFasterThanFailFast() {
    DemoResult r = defaultRun.result();
    assertThat(r.exitCode()).as(defaultRun.out() + defaultRun.err()).isEqualTo(GangDemo.EXIT_OK);
    assertThat(r.errors()).isEmpty();
    assertThat(r.warnings()).isEmpty(); // the guide's configuration is the correct one
    ModeResult gang = r.gang().orElseThrow();
    ModeResult failFast = r.failFast().orElseThrow();
    for (ModeResult m : List.of(gang, failFast)) {
      assertThat(m.members())
          .extracting(MemberResult::pod)
          .containsExactly(
              "default/gang-worker-1",
              "default/gang-worker-2",
              "default/gang-worker-3",
              "default/gang-worker-4");
      assertThat(m.members()).allMatch(MemberResult::bound).allMatch(MemberResult::gangMember);
      assertThat(m.members())
          .allSatisfy(
              p -> {
                assertThat(p.gpuUuids()).hasSize(1);
                assertThat(p.memoryMiB()).isEqualTo(3000);
                assertThat(p.cores()).isEqualTo(30);
              });
      assertThat(m.violations()).isEmpty();
      assertThat(m.locksLeft()).isEmpty();
      assertThat(m.timeZero()).isEqualTo("Permit release");
      assertThat(m.backend()).contains("API emulator");
      assertThat(m.requestsByVerb()).containsEntry("create pods/binding", 4L);
      // every member's lock was handed to and released by the device plugin, once
      assertThat(m.holds())
          .hasSize(4)
          .allSatisfy(
              h -> {
                assertThat(h.releasedMs()).isPresent();
                assertThat(h.releasedBy()).startsWith("device-plugin/");
              });
    }
    // binpack puts the whole gang on one node, so the members contend for its lock
    assertThat(gang.members()).extracting(MemberResult::node).containsOnly("node-a");
    assertThat(gang.members().stream().mapToInt(MemberResult::lockAttempts).sum()).isGreaterThan(4);
    // the gang waits instead of failing: one bind call each; fail-fast needs re-queues
    assertThat(gang.members()).allMatch(p -> p.binds() == 1);
    assertThat(failFast.members().stream().mapToInt(MemberResult::binds).sum()).isGreaterThan(4);
    assertThat(gang.timeToBoundMs().orElseThrow())
        .isLessThan(failFast.timeToBoundMs().orElseThrow());
    // holds never overlap on a node: each starts after the previous one ended
    for (ModeResult m : List.of(gang, failFast)) {
      for (int i = 1; i < m.holds().size(); i++) {
        assertThat(m.holds().get(i).acquiredMs())
            .isGreaterThanOrEqualTo(m.holds().get(i - 1).releasedMs().orElseThrow());
      }
    }
  }

  @Test
  void defaultRunPrintsTheTablesTheChecksAndTheComparison() {
    String out = defaultRun.out();
    assertThat(out)
        .contains(
            "POD", "NODE", "GPU UUID(S)", "MiB", "CORES", "LOCK WAIT ms", "ATTEMPTS", "RESULT")
        .contains("time to fully bound (from Permit release)")
        .contains("API requests by verb: ")
        .contains("create pods/binding 4")
        .contains("overlap check: OK")
        .contains("== side by side ==")
        .contains("exit code 0");
    assertThat(out.lines().filter(l -> l.startsWith("default/gang-worker-")).count()).isEqualTo(8);
  }

  @Test
  void timelineIsWellFormedSvgWithOneBarPerLockHold() throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    Document doc = f.newDocumentBuilder().parse(svg.toFile());
    assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("svg");
    NodeList rects = doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "rect");
    List<String> holdPods = new ArrayList<>();
    for (int i = 0; i < rects.getLength(); i++) {
      Element e = (Element) rects.item(i);
      if (e.getAttribute("class").equals("hold")) {
        holdPods.add(e.getAttribute("data-pod"));
        assertThat(Double.parseDouble(e.getAttribute("width"))).isPositive();
      }
    }
    List<String> expected = new ArrayList<>();
    defaultRun.result().runs().forEach(m -> m.holds().forEach(h -> expected.add(h.pod())));
    assertThat(holdPods).containsExactlyElementsOf(expected).hasSize(8);
  }

  @Test
  void jsonOutputParses() throws Exception {
    Run r = run("--json", "--mode", "gang", "--replicas", "3", "--allocate-ms", "5");
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_OK);
    JsonNode root = new ObjectMapper().readTree(r.out());
    assertThat(root.path("exitCode").asInt()).isZero();
    assertThat(root.path("runs")).hasSize(1);
    JsonNode gang = root.path("runs").get(0);
    assertThat(gang.path("mode").asText()).isEqualTo("gang");
    assertThat(gang.path("replicas").asInt()).isEqualTo(3);
    assertThat(gang.path("allBound").asBoolean()).isTrue();
    assertThat(gang.path("pods")).hasSize(4);
    assertThat(gang.path("pods").get(2).path("replica").asInt()).isEqualTo(2);
    assertThat(gang.path("lockHolds")).hasSize(4);
    assertThat(gang.path("violations")).isEmpty();
    assertThat(gang.path("requestsByVerb").path("create pods/binding").asLong()).isEqualTo(4);
  }

  @Test
  void everyJsonTimeCountsFromThePermitRelease() throws Exception {
    Run r = run("--json", "--backoff-scale", "0.05");
    assertThat(r.result().exitCode()).as(r.err()).isEqualTo(GangDemo.EXIT_OK);
    JsonNode runs = new ObjectMapper().readTree(r.out()).path("runs");
    assertThat(runs).hasSize(2);
    for (JsonNode run : runs) {
      String mode = run.path("mode").asText();
      assertThat(run.path("timeOrigin").asText()).as(mode).isEqualTo("Permit release");
      double toBound = run.path("timeToBoundMs").asDouble();
      double handOffsDone = run.path("timeToAllocatedMs").asDouble();
      assertThat(run.path("pods"))
          .hasSize(4)
          .allSatisfy(
              p -> {
                // members bind after the Permit released them and no later than the run's last bind
                assertThat(p.path("boundMs").asDouble())
                    .as(mode + " " + p)
                    .isGreaterThanOrEqualTo(0)
                    .isLessThanOrEqualTo(toBound);
                assertThat(p.path("allocatedMs").asDouble())
                    .as(mode + " " + p)
                    .isGreaterThanOrEqualTo(p.path("boundMs").asDouble())
                    .isLessThanOrEqualTo(handOffsDone);
              });
      // timeToBoundMs is the last pod's boundMs, on the same origin
      double lastBound = 0;
      for (JsonNode p : run.path("pods")) {
        lastBound = Math.max(lastBound, p.path("boundMs").asDouble());
      }
      assertThat(lastBound).as(mode).isEqualTo(toBound);
      assertThat(run.path("lockHolds"))
          .hasSize(4)
          .allSatisfy(
              h -> {
                assertThat(h.path("acquiredMs").asDouble())
                    .as(mode + " " + h)
                    .isGreaterThanOrEqualTo(0);
                assertThat(h.path("releasedMs").asDouble())
                    .as(mode + " " + h)
                    .isGreaterThan(h.path("acquiredMs").asDouble())
                    .isLessThanOrEqualTo(handOffsDone);
              });
    }
  }

  @Test
  void podGroupKeyUnderAnnotationsWarnsThatThePodsAreNotGangMembers() {
    Run r =
        run("--manifests", pitfall("annotation-instead-of-label.yaml"), "--backoff-scale", "0.05");
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_OK);
    assertThat(r.result().warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains("metadata.annotations")
                    .contains("NOT gang members")
                    .contains("one by one regardless of minMember 4"));
    ModeResult m = r.result().gang().orElseThrow();
    assertThat(m.members()).noneMatch(MemberResult::gangMember).allMatch(MemberResult::bound);
    assertThat(m.timeZero()).isEqualTo("first Filter"); // no Permit: nothing waits for the group
    assertThat(r.out()).contains("WARNING: pods default/gang-worker-1", "(not a gang member)");
    // without gang members both modes bind fail-fast: the side by side claims no speed-up
    assertThat(r.result().failFast().orElseThrow().timeZero()).isEqualTo("first Filter");
    String verdict =
        r.out()
            .lines()
            .dropWhile(l -> !l.equals("== side by side =="))
            .filter(l -> l.startsWith("no pod"))
            .findFirst()
            .orElseThrow(() -> new AssertionError(r.out()));
    assertThat(verdict).startsWith("no pod is a gang member, so there is no gang to compare");
    assertThat(r.out()).doesNotContain("faster").doesNotContain("slower");
  }

  @Test
  void threePodsForMinMemberFiveCanNeverReachQuorumAndNothingIsBound() {
    Run r = run("--manifests", pitfall("three-pods-min-five.yaml"));
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(r.result().errors())
        .anySatisfy(
            e ->
                assertThat(e)
                    .contains(
                        "cannot find enough sibling pods, current pods number: 3, minMember of group: 5"));
    assertThat(r.result().runs()).isEmpty();
  }

  @Test
  void muslImageWithHamiResourcesWarnsThatLibvgpuCannotLoad() {
    Run r = run("--manifests", pitfall("musl-image.yaml"), "--mode", "gang");
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_OK);
    assertThat(r.result().warnings())
        .anySatisfy(
            w ->
                assertThat(w)
                    .contains("libvgpu.so (glibc) cannot load")
                    .contains("libdl.so.2: cannot open shared object file")
                    .contains("busybox:1.36")
                    .contains("gang-worker-2"));
    assertThat(r.result().gang().orElseThrow().allBound()).isTrue();
  }

  @Test
  void podThatFitsNowhereGetsHamisReasonsPerNode() {
    Run r = run("--manifests", pitfall("too-big.yaml"));
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(r.result().errors())
        .singleElement()
        .satisfies(
            e ->
                assertThat(e)
                    .contains("fits on no node")
                    .contains("node-a: 2/2 CardInsufficientMemory")
                    .contains("node-b: 1/1 CardInsufficientMemory"));
    assertThat(r.result().runs()).isEmpty();
  }

  @Test
  void invalidYamlNamesTheFileAndTheDocument() {
    String file = pitfall("invalid-yaml.yaml");
    Run r = run("--manifests", file);
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(r.result().errors())
        .singleElement()
        .satisfies(e -> assertThat(e).startsWith(file + ": document 2: ").contains("line 14"));
  }

  @Test
  void badFieldValuesNameFileDocumentAndField() {
    String pg = pitfall("bad-min-member.yaml");
    assertThat(run("--manifests", pg).result().errors())
        .singleElement()
        .satisfies(
            e ->
                assertThat(e)
                    .startsWith(pg + ": document 1: field spec.minMember: ")
                    .contains("\"four\""));
    String mem = pitfall("bad-gpumem.yaml");
    Run r = run("--manifests", mem);
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(r.result().errors())
        .singleElement()
        .satisfies(
            e ->
                assertThat(e)
                    .startsWith(
                        mem
                            + ": document 1: field spec.containers[0].resources.limits[\"nvidia.com/gpumem\"]: "));
    String json = pitfall("unknown-field.json");
    assertThat(run("--manifests", json).result().errors())
        .singleElement()
        .satisfies(e -> assertThat(e).startsWith(json + ": document 1: ").contains("contaners"));
  }

  @Test
  void unreadableFileIsAUserError() {
    Path missing = tmp.resolve("no-such-file.yaml");
    Run r = run("--manifests", missing.toString());
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(r.result().errors())
        .singleElement()
        .satisfies(e -> assertThat(e).startsWith(missing + ": cannot read"));
  }

  @Test
  void badOptionsAreUserErrorsAndHelpSucceeds() {
    assertThat(run("--replicas", "zero").result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(run("--retry-timeout", "28").err()).contains("--retry-timeout").contains("28");
    assertThat(run("--retry-timeout", "40s").result().errors())
        .singleElement()
        .satisfies(e -> assertThat(e).contains("--retry-timeout 40s"));
    assertThat(run("--mode", "sometimes").result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    for (String[] bad :
        List.of(
            new String[] {"--frobnicate"},
            new String[] {"--replicas", "zero"},
            new String[] {"--mode"})) {
      String err = run(bad).err();
      // one hint to --help, not two
      assertThat(err.split("--help", -1)).as(err).hasSize(2);
      assertThat(err).contains("(run with --help for the options)");
    }
    assertThat(run("--frobnicate").err()).contains("unknown option \"--frobnicate\"");
    Run help = run("--help");
    assertThat(help.result().exitCode()).isEqualTo(GangDemo.EXIT_OK);
    assertThat(help.out())
        .contains(
            "--manifests",
            "--replicas",
            "--allocate-ms",
            "--retry-timeout",
            "--mode",
            "--json",
            "--timeline",
            "--kubeconfig",
            "--yes",
            "--help");
  }

  @Test
  void timelineToAnUnwritablePathIsAUserError() {
    Path dir = tmp.resolve("no-dir/t.svg");
    Run r = run("--mode", "gang", "--timeline", dir.toString(), "--backend", "memory");
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(r.result().errors())
        .singleElement()
        .satisfies(e -> assertThat(e).contains(dir.toString()));
    assertThat(Files.exists(dir)).isFalse();
  }

  @Test
  void inMemoryBackendGivesTheSameSafeOutcome() {
    Run r = run("--backend", "memory", "--backoff-scale", "0.05");
    assertThat(r.result().exitCode()).isEqualTo(GangDemo.EXIT_OK);
    assertThat(r.result().runs())
        .hasSize(2)
        .allSatisfy(
            m -> {
              assertThat(m.ok()).isTrue();
              assertThat(m.backend()).contains("InMemoryCluster");
            });
  }
}
