package dev.hamilock.preflight;

import static dev.hamilock.preflight.Fixtures.ARGS;
import static dev.hamilock.preflight.Fixtures.CONFIG;
import static dev.hamilock.preflight.Fixtures.GANG;
import static dev.hamilock.preflight.Fixtures.RBAC;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every check has failing variants and a fixed variant of the guide's manifests: a failing variant
 * produces the check's finding at the offending file, document and path; a fixed variant leaves the
 * whole guide set clean (no ERROR, no WARNING).
 */
class PitfallFixturesTest {

  static Stream<Arguments> failing() {
    return Stream.of(
        Arguments.of(
            "PF01",
            CONFIG,
            "pf01-fail-queue-sort.yaml",
            null,
            Severity.ERROR,
            1,
            "data[\"config.yaml\"].profiles[0].plugins"),
        Arguments.of(
            "PF02",
            CONFIG,
            "pf02-fail-no-coscheduling.yaml",
            null,
            Severity.ERROR,
            1,
            "data[\"config.yaml\"].profiles[0]"),
        Arguments.of(
            "PF03",
            ARGS,
            "pf03-fail-retry-30s.yaml",
            null,
            Severity.ERROR,
            1,
            "scheduler.extender.extraArgs[2]"),
        Arguments.of(
            "PF03",
            ARGS,
            "pf03-warn-retry-29s.yaml",
            null,
            Severity.WARNING,
            1,
            "scheduler.extender.extraArgs[2]"),
        Arguments.of(
            "PF03",
            ARGS,
            "pf03-info-retry-0.yaml",
            null,
            Severity.INFO,
            1,
            "scheduler.extender.extraArgs[2]"),
        Arguments.of(
            "PF03",
            CONFIG,
            "pf03-fail-no-http-timeout.yaml",
            null,
            Severity.ERROR,
            1,
            "data[\"config.yaml\"].extenders[0]"),
        Arguments.of(
            "PF03",
            ARGS,
            "pf03-fail-deployment-35s.yaml",
            null,
            Severity.ERROR,
            1,
            "spec.template.spec.containers[1].command[11]"),
        Arguments.of("PF04", RBAC, "pf04-fail-no-watch.yaml", null, Severity.ERROR, 2, "roleRef"),
        Arguments.of(
            "PF04", RBAC, "pf04-fail-rolebinding.yaml", null, Severity.ERROR, 2, "roleRef"),
        Arguments.of(
            "PF04",
            ARGS,
            "pf04-fail-other-service-account.yaml",
            "guide/" + RBAC,
            Severity.ERROR,
            2,
            "subjects"),
        Arguments.of(
            "PF05",
            GANG,
            "pf05-fail-annotation.yaml",
            null,
            Severity.ERROR,
            5,
            "metadata.annotations[\"scheduling.x-k8s.io/pod-group\"]"),
        Arguments.of(
            "PF06",
            GANG,
            "pf06-fail-three-members.yaml",
            null,
            Severity.ERROR,
            1,
            "spec.minMember"),
        Arguments.of(
            "PF06",
            GANG,
            "pf06-fail-job-parallelism.yaml",
            null,
            Severity.ERROR,
            1,
            "spec.minMember"),
        Arguments.of(
            "PF07",
            GANG,
            "pf07-fail-scheduler-name.yaml",
            null,
            Severity.ERROR,
            3,
            "spec.schedulerName"),
        Arguments.of(
            "PF07", GANG, "pf07-warn-default-scheduler.yaml", null, Severity.WARNING, 3, "spec"),
        Arguments.of(
            "PF08",
            GANG,
            "pf08-fail-typo.yaml",
            null,
            Severity.ERROR,
            5,
            "metadata.labels[\"scheduling.x-k8s.io/pod-group\"]"),
        Arguments.of(
            "PF09",
            GANG,
            "pf09-fail-busybox.yaml",
            null,
            Severity.ERROR,
            2,
            "spec.containers[0].image"),
        Arguments.of(
            "PF09",
            GANG,
            "pf09-fail-alpine.yaml",
            null,
            Severity.ERROR,
            2,
            "spec.containers[0].image"),
        Arguments.of(
            "PF10",
            GANG,
            "pf10-fail-gpumem-16gi.yaml",
            null,
            Severity.ERROR,
            2,
            "spec.containers[0].resources.limits[\"nvidia.com/gpumem\"]"),
        Arguments.of(
            "PF10",
            GANG,
            "pf10-fail-percentage.yaml",
            null,
            Severity.ERROR,
            2,
            "spec.containers[0].resources.limits[\"nvidia.com/gpumem-percentage\"]"),
        Arguments.of(
            "PF10",
            GANG,
            "pf10-warn-cores.yaml",
            null,
            Severity.WARNING,
            2,
            "spec.containers[0].resources.limits[\"nvidia.com/gpucores\"]"),
        Arguments.of(
            "PF10",
            GANG,
            "pf10-warn-no-count.yaml",
            null,
            Severity.WARNING,
            2,
            "spec.containers[0].resources.limits[\"nvidia.com/gpumem\"]"));
  }

  @ParameterizedTest(name = "{0} {2}")
  @MethodSource("failing")
  void failingVariantIsReported(
      String checkId,
      String replaced,
      String variant,
      String expectedFile,
      Severity severity,
      int document,
      String path)
      throws Exception {
    List<Path> files =
        variant.contains("deployment") || variant.contains("service-account")
            ? withExtra(variant)
            : Fixtures.guideWith(replaced, variant);
    PreflightReport report = Fixtures.run(files);

    List<Finding> found = Fixtures.of(report, checkId);
    assertThat(found)
        .as(report.findings().toString())
        .anySatisfy(
            f -> {
              assertThat(f.severity()).isEqualTo(severity);
              assertThat(f.location().path()).isEqualTo(path);
              assertThat(f.location().document()).isEqualTo(document);
              assertThat(f.location().source())
                  .endsWith(expectedFile == null ? variant : expectedFile);
              assertThat(f.location().line()).isPresent();
              assertThat(f.message()).isNotBlank();
              assertThat(f.fix()).isNotBlank();
            });
    if (severity == Severity.ERROR) {
      assertThat(report.hasErrors()).isTrue();
    }
  }

  /** Deployment variants are added to the whole guide set (the Helm values stay). */
  private static List<Path> withExtra(String variant) {
    List<Path> files = new ArrayList<>(Fixtures.guide());
    files.add(Fixtures.resource("pitfalls/" + variant));
    return files;
  }

  static Stream<Arguments> fixed() {
    return Stream.of(
        Arguments.of(CONFIG, "pf01-fixed-multipoint-disabled.yaml"),
        Arguments.of(CONFIG, "pf02-fixed-per-point.yaml"),
        Arguments.of(ARGS, "pf03-fixed-retry-25s.yaml"),
        Arguments.of(ARGS, "pf03-fixed-deployment-28s.yaml"),
        Arguments.of(RBAC, "pf04-fixed-wildcards.yaml"),
        Arguments.of(GANG, "pf05-fixed-label.yaml"),
        Arguments.of(GANG, "pf06-fixed-job.yaml"),
        Arguments.of(GANG, "pf07-fixed.yaml"),
        Arguments.of(GANG, "pf08-fixed.yaml"),
        Arguments.of(GANG, "pf09-fixed-cuda.yaml"),
        Arguments.of(GANG, "pf10-fixed-gpumem-mib.yaml"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("fixed")
  void fixedVariantIsClean(String replaced, String variant) throws Exception {
    PreflightReport report = Fixtures.run(Fixtures.guideWith(replaced, variant));

    assertThat(report.findings()).filteredOn(f -> f.severity() != Severity.INFO).isEmpty();
    assertThat(report.sources()).anyMatch(s -> s.endsWith(variant));
  }
}
