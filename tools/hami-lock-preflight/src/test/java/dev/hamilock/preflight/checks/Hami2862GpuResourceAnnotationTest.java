package dev.hamilock.preflight.checks;

import static dev.hamilock.preflight.checks.CheckHarness.pod;
import static dev.hamilock.preflight.checks.CheckHarness.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * HAMi#2862: {@code nvidia.com/gpumem} / {@code gpucores} written as pod annotations are silently
 * ignored (the pod gets a whole card); preflight said "No findings". PF12 reports each one.
 */
class Hami2862GpuResourceAnnotationTest {
  static final GpuResourceAnnotationCheck CHECK = new GpuResourceAnnotationCheck();

  @Test
  void gpumemAndGpucoresAsPodAnnotationsAreEachAnErrorWithTheFix() {
    String annotated =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w1\n  namespace: default\n"
            + "  annotations:\n    nvidia.com/gpumem: \"3000\"\n    nvidia.com/gpucores: \"30\"\n"
            + "spec:\n  containers:\n    - name: c\n      image: ubuntu:22.04\n"
            + "      resources:\n        limits: {nvidia.com/gpu: 1}\n";

    List<Finding> f = run(CHECK, annotated);

    assertThat(f).extracting(Finding::checkId).containsOnly("PF12");
    assertThat(f).extracting(Finding::severity).containsOnly(Severity.ERROR);
    assertThat(f)
        .extracting(x -> x.location().path())
        .containsExactly(
            "metadata.annotations[\"nvidia.com/gpumem\"]",
            "metadata.annotations[\"nvidia.com/gpucores\"]");
    assertThat(f.get(0).message())
        .contains("nvidia.com/gpumem: \"3000\"", "whole card", "HAMi#2862");
    assertThat(f.get(0).fix()).contains("resources.limits");
  }

  @Test
  void theSameResourcesAsLimitsAreClean() {
    assertThat(run(CHECK, pod("w1", "", "", "nvidia.com/gpu: 1, nvidia.com/gpumem: 3000")))
        .isEmpty();
  }
}
