package dev.hamilock.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exit codes, table and JSON output of {@code preflight FILE...}. */
class PreflightCommandTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(List<String> args) {
    return PreflightCommand.run(
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private static List<String> paths(List<Path> files, String... options) {
    List<String> args = new ArrayList<>(List.of(options));
    files.forEach(p -> args.add(p.toString()));
    return args;
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void guideIsCleanWithExitZero() {
    assertThat(run(paths(Fixtures.guide()))).isEqualTo(PreflightCommand.EXIT_CLEAN);
    assertThat(out()).startsWith("No findings (4 files, 9 documents).");
    assertThat(err()).isEmpty();
  }

  @Test
  void directoryArgumentReadsItsYamlFiles() {
    Path dir = Fixtures.resource("guide");
    assertThat(run(List.of(dir.toString()))).isEqualTo(0);
    assertThat(out()).contains("4 files, 9 documents");
  }

  @Test
  void errorFindingGivesExitOneAndATable() {
    int code = run(paths(Fixtures.guideWith(Fixtures.CONFIG, "pf01-fail-queue-sort.yaml")));

    assertThat(code).isEqualTo(PreflightCommand.EXIT_ERRORS);
    assertThat(out())
        .contains(
            "SEVERITY",
            "ERROR",
            "PF01 queue-sort-conflict",
            "pf01-fail-queue-sort.yaml#1 data[\"config.yaml\"].profiles[0].plugins (line 18)",
            "fix: ",
            "1 finding: 1 error, 0 warnings, 0 info");
  }

  @Test
  void warningAloneGivesExitZero() {
    int code = run(paths(Fixtures.guideWith(Fixtures.ARGS, "pf03-warn-retry-29s.yaml")));

    assertThat(code).isEqualTo(PreflightCommand.EXIT_CLEAN);
    assertThat(out()).contains("WARNING", "PF03", "0 errors, 1 warning");
  }

  @Test
  void jsonReportParsesBackWithJackson() throws IOException {
    int code =
        run(paths(Fixtures.guideWith(Fixtures.GANG, "pf10-fail-gpumem-16gi.yaml"), "--json"));

    assertThat(code).isEqualTo(1);
    JsonNode root = new ObjectMapper().readTree(out());
    assertThat(root.get("files")).hasSize(4);
    assertThat(root.get("documents").asInt()).isEqualTo(9);
    assertThat(root.at("/summary/error").asInt()).isEqualTo(1);
    assertThat(root.at("/summary/warning").asInt()).isZero();
    assertThat(root.at("/summary/info").asInt()).isZero();
    JsonNode f = root.get("findings").get(0);
    assertThat(f.get("check").asText()).isEqualTo("PF10");
    assertThat(f.get("name").asText()).isEqualTo("gpu-resource-values");
    assertThat(f.get("severity").asText()).isEqualTo("ERROR");
    assertThat(f.get("file").asText()).endsWith("pf10-fail-gpumem-16gi.yaml");
    assertThat(f.get("document").asInt()).isEqualTo(2);
    assertThat(f.get("path").asText())
        .isEqualTo("spec.containers[0].resources.limits[\"nvidia.com/gpumem\"]");
    assertThat(f.get("line").asInt()).isEqualTo(29);
    assertThat(f.get("message").asText()).contains("16Gi", "17179869184");
    assertThat(f.get("fix").asText()).contains("16384");
  }

  @Test
  void cleanJsonHasEmptyFindings() throws IOException {
    assertThat(run(paths(Fixtures.guide(), "--json"))).isZero();
    JsonNode root = new ObjectMapper().readTree(out());
    assertThat(root.get("findings").isArray()).isTrue();
    assertThat(root.get("findings")).isEmpty();
  }

  @Test
  void missingFileGivesExitTwoNamingIt(@TempDir Path dir) {
    Path missing = dir.resolve("nope.yaml");
    assertThat(run(List.of(missing.toString()))).isEqualTo(PreflightCommand.EXIT_INPUT);
    assertThat(err()).contains(missing.toString(), "cannot read file");
    assertThat(out()).isEmpty();
  }

  @Test
  void invalidYamlGivesExitTwoNamingFileAndDocument(@TempDir Path dir) throws IOException {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "apiVersion: v1\nkind: Pod\n---\nmetadata:\n  name: [unclosed\n");
    assertThat(
            run(List.of(Fixtures.resource("guide/gang-training.yaml").toString(), bad.toString())))
        .isEqualTo(2);
    assertThat(err()).contains(bad.toString() + ": document 2: ").contains("line");
  }

  @Test
  void aBadFileInADirectoryIsNamedAndTheOtherFilesAreStillJudged(@TempDir Path dir)
      throws IOException {
    Files.writeString(dir.resolve("a-bad.yaml"), "kind: Pod\nmetadata:\n  name: [unclosed\n");
    Files.writeString(
        dir.resolve("b-pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w1\n  namespace: default\n"
            + "  annotations:\n    scheduling.x-k8s.io/pod-group: gang\n"
            + "spec:\n  containers:\n    - name: c\n      image: ubuntu:22.04\n");
    assertThat(run(List.of(dir.toString()))).isEqualTo(PreflightCommand.EXIT_INPUT);
    assertThat(err()).contains(dir.resolve("a-bad.yaml").toString());
    assertThat(out()).contains("PF05", dir.resolve("b-pod.yaml").toString(), "1 file");
  }

  @Test
  void invalidEmbeddedConfigGivesExitTwoNamingFileDocumentAndPath(@TempDir Path dir)
      throws IOException {
    Path bad = dir.resolve("cm.yaml");
    Files.writeString(
        bad,
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  config.yaml: |\n"
            + "    kind: KubeSchedulerConfiguration\n    profiles: [\n");
    assertThat(run(List.of(bad.toString()))).isEqualTo(2);
    assertThat(err()).contains(bad + ": document 1: embedded YAML in data[\"config.yaml\"]");
  }

  @Test
  void usageErrorsGiveExitTwo() {
    assertThat(run(List.of())).isEqualTo(2);
    assertThat(err()).contains("no input files", "usage: preflight");
    assertThat(run(List.of("--yaml", "x.yaml"))).isEqualTo(2);
    assertThat(err()).contains("unknown option --yaml");
  }

  @Test
  void helpGivesExitZero() {
    assertThat(run(List.of("--help"))).isZero();
    assertThat(out())
        .contains("usage: preflight [--json] FILE...")
        // as setUps() groups them (the help said the named files were separate set-ups)
        .contains("The files named here form\n  one set-up together");
  }

  /**
   * Copies the guide into {@code dir/guide} and examples/extender/deploy into {@code dir/deploy}.
   */
  private static void twoSetUps(Path dir) throws IOException {
    Files.createDirectories(dir.resolve("guide"));
    for (Path f : Fixtures.guide()) {
      Files.copy(f, dir.resolve("guide").resolve(f.getFileName()));
    }
    Path deploy = Path.of("../../examples/extender/deploy");
    Files.createDirectories(dir.resolve("deploy"));
    try (var s = Files.list(deploy)) {
      for (Path f : s.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        Files.copy(f, dir.resolve("deploy").resolve(f.getFileName()));
      }
    }
  }

  @Test
  void twoDirectoryArgumentsAreTwoSetUps(@TempDir Path dir) throws IOException {
    twoSetUps(dir);
    // judged as one set, the guide's PodGroup was checked against the example's profile
    // "hami-scheduler", which has no Coscheduling: a PF02 built from another set-up's files
    assertThat(run(List.of(dir.resolve("guide").toString(), dir.resolve("deploy").toString())))
        .as(out())
        .isEqualTo(PreflightCommand.EXIT_CLEAN);
    assertThat(out()).isEqualTo("No findings (8 files, 18 documents)." + System.lineSeparator());
  }

  @Test
  void directoryOfTwoSetUpsJudgesEachOnItsOwn(@TempDir Path dir) throws IOException {
    twoSetUps(dir);
    // judged as one set, the guide's PodGroup was checked against the example's profile
    // "hami-scheduler", which has no Coscheduling: a PF02 built from another set-up's files
    assertThat(run(List.of(dir.toString()))).isEqualTo(PreflightCommand.EXIT_CLEAN);
    assertThat(out()).isEqualTo("No findings (8 files, 18 documents)." + System.lineSeparator());
    assertThat(err()).isEmpty();
  }

  @Test
  void findingsOfSeveralSetUpsNameTheirSetUp(@TempDir Path dir) throws IOException {
    twoSetUps(dir);
    Path broken = dir.resolve("broken");
    Files.createDirectories(broken);
    Files.copy(Fixtures.resource("guide/" + Fixtures.CONFIG), broken.resolve(Fixtures.CONFIG));
    Files.copy(
        Fixtures.resource("pitfalls/pf03-fail-deployment-35s.yaml"),
        broken.resolve("deployment.yaml"));

    assertThat(run(List.of("--json", dir.toString()))).isEqualTo(PreflightCommand.EXIT_ERRORS);
    JsonNode findings = new ObjectMapper().readTree(out()).get("findings");
    assertThat(findings).isNotEmpty();
    for (JsonNode f : findings) {
      assertThat(f.get("setUp").asText()).isEqualTo(broken.toString());
      assertThat(f.get("file").asText()).startsWith(broken.toString());
    }
    assertThat(findings).extracting(f -> f.get("check").asText()).containsOnly("PF03");

    out.reset();
    assertThat(run(List.of(dir.toString()))).isEqualTo(PreflightCommand.EXIT_ERRORS);
    assertThat(out()).startsWith("SET-UP " + broken + System.lineSeparator() + "SEVERITY");
  }
}
