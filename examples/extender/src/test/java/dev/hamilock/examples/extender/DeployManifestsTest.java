package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.Preflight;
import dev.hamilock.preflight.PreflightReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * examples/extender/deploy/: the preflight finds nothing, and the extender's role is exactly its
 * verbs.
 */
class DeployManifestsTest {
  static final Path DEPLOY = Path.of("deploy"); // surefire runs in the module directory

  static List<Path> manifests() throws Exception {
    try (Stream<Path> s = Files.list(DEPLOY)) {
      return s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
  }

  @Test
  void preflightFindsNothing() throws Exception {
    PreflightReport report = Preflight.standard().run(manifests());
    assertThat(report.findings()).as(report.toString()).isEmpty();
    assertThat(report.documents()).isGreaterThanOrEqualTo(9);
  }

  @Test
  void thePreflightReadsTheseFilesAnIgnorableExtenderIsFound(
      @org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
    for (Path p : manifests()) {
      String text = Files.readString(p);
      Files.writeString(
          tmp.resolve(p.getFileName()), text.replace("ignorable: false", "ignorable: true"));
    }
    PreflightReport report;
    try (Stream<Path> s = Files.list(tmp)) {
      report = Preflight.standard().run(s.sorted().toList());
    }
    assertThat(report.findings()).anySatisfy(f -> assertThat(f.toString()).contains("PF11"));
  }

  /** The verbs hami-lock-k8s and the example call, per resource (see deploy/10-rbac.yaml). */
  static final Map<String, Set<String>> USED =
      new TreeMap<>(
          Map.of(
              "nodes", new TreeSet<>(List.of("get", "list", "watch", "patch")),
              "pods", new TreeSet<>(List.of("get", "list", "watch", "patch")),
              "pods/binding", new TreeSet<>(List.of("create")),
              "events", new TreeSet<>(List.of("create")),
              "resource.k8s.io/resourceslices", new TreeSet<>(List.of("list", "watch")),
              "resource.k8s.io/resourceclaims", new TreeSet<>(List.of("list", "watch"))));

  @Test
  void theExtendersClusterRoleGrantsExactlyTheVerbsItUses() throws Exception {
    assertThat(granted(DEPLOY.resolve("10-rbac.yaml"), "hami-extender")).isEqualTo(USED);
  }

  /** --gpu-preemption's grant is its own opt-in file: pods/eviction create, nothing else. */
  @Test
  void theOptInGpuPreemptionRoleGrantsOnlyEvictionsAndPreflightFindsNothingWithIt()
      throws Exception {
    Path optIn = DEPLOY.resolveSibling("deploy-gpu-preemption/rbac.yaml");
    assertThat(granted(optIn, "hami-extender-gpu-preemption"))
        .isEqualTo(Map.of("pods/eviction", Set.of("create")));
    List<Path> all = new java.util.ArrayList<>(manifests());
    all.add(optIn);
    PreflightReport report = Preflight.standard().run(all);
    assertThat(report.findings()).as(report.toString()).isEmpty();
  }

  private static Map<String, Set<String>> granted(Path file, String role) throws Exception {
    Map<String, Set<String>> granted = new TreeMap<>();
    for (Object doc :
        new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(Files.readString(file))) {
      Map<?, ?> m = (Map<?, ?>) doc;
      if ("ClusterRole".equals(m.get("kind"))
          && role.equals(((Map<?, ?>) m.get("metadata")).get("name"))) {
        for (Object r : (List<?>) m.get("rules")) {
          Map<?, ?> rule = (Map<?, ?>) r;
          List<?> groups = (List<?>) rule.get("apiGroups");
          assertThat(groups).hasSize(1);
          String group = groups.get(0).equals("") ? "" : groups.get(0) + "/";
          for (Object res : (List<?>) rule.get("resources")) {
            for (Object v : (List<?>) rule.get("verbs")) {
              granted.computeIfAbsent(group + res, k -> new TreeSet<>()).add((String) v);
            }
          }
        }
      }
    }
    return granted;
  }
}
