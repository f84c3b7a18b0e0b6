package dev.hamilock.preflight.checks;

import static dev.hamilock.preflight.checks.CheckHarness.COSCHEDULING;
import static dev.hamilock.preflight.checks.CheckHarness.pod;
import static dev.hamilock.preflight.checks.CheckHarness.run;
import static dev.hamilock.preflight.checks.CheckHarness.schedulerConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.testing.generators.Props;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The numeric thresholds of PF03 and PF10 hold for generated values, not just the fixtures' ones.
 */
class ThresholdProperties {

  @Test
  void retryTimeoutSeverityFollowsHeadroom() {
    Props.qt(150)
        .forAll(integers().between(1, 120_000), integers().between(1, 120_000))
        .checkAssert(ThresholdProperties::retryTimeoutSeverity);
  }

  private static void retryTimeoutSeverity(int retryMillis, int httpMillis) {
    String cfg =
        schedulerConfig(
            COSCHEDULING,
            "  - {urlPrefix: x, bindVerb: bind, httpTimeout: " + httpMillis + "ms}\n");
    String values =
        "scheduler:\n  extender:\n    extraArgs: [\"--node-lock-retry-timeout="
            + retryMillis
            + "ms\"]\n";
    List<Finding> found = run(new RetryTimeoutCheck(), cfg, values);

    if (retryMillis >= httpMillis) {
      assertThat(found)
          .singleElement()
          .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.ERROR));
    } else if (httpMillis - retryMillis < 2_000) {
      assertThat(found)
          .singleElement()
          .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.WARNING));
    } else {
      assertThat(found).isEmpty();
    }
  }

  @Test
  void gpumemIsAcceptedExactlyUpToInt32MiB() {
    Props.qt(150)
        .forAll(longs().between(0, 1L << 40), booleans().all())
        .checkAssert(ThresholdProperties::gpumemAccepted);
  }

  private static void gpumemAccepted(long value, boolean mebibyteSuffix) {
    String text = value + (mebibyteSuffix ? "Mi" : "");
    BigInteger effective = BigInteger.valueOf(value).shiftLeft(mebibyteSuffix ? 20 : 0);
    List<Finding> found =
        run(
            new GpuResourceValuesCheck(),
            pod("p", "", "", "nvidia.com/gpu: 1, nvidia.com/gpumem: \"" + text + "\""));

    if (effective.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
      assertThat(found)
          .singleElement()
          .satisfies(
              f -> {
                assertThat(f.severity()).isEqualTo(Severity.ERROR);
                assertThat(f.message()).contains(effective.toString());
              });
    } else {
      assertThat(found).isEmpty();
    }
  }

  @Test
  void percentageAndCoresBoundaries() {
    Props.qt(100)
        .forAll(integers().between(-50, 300), integers().between(0, 300))
        .checkAssert(ThresholdProperties::percentageAndCores);
  }

  private static void percentageAndCores(int percentage, int cores) {
    List<Finding> found =
        run(
            new GpuResourceValuesCheck(),
            pod(
                "p",
                "",
                "",
                "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: \""
                    + percentage
                    + "\", nvidia.com/gpucores: \""
                    + cores
                    + "\""));

    boolean percentageBad = percentage < 0 || percentage > 100;
    assertThat(
            found.stream()
                .anyMatch(
                    f ->
                        f.severity() == Severity.ERROR
                            && f.location().path().endsWith("[\"nvidia.com/gpumem-percentage\"]")))
        .isEqualTo(percentageBad);
    assertThat(
            found.stream()
                .anyMatch(
                    f ->
                        f.severity() == Severity.WARNING
                            && f.location().path().endsWith("[\"nvidia.com/gpucores\"]")))
        .isEqualTo(cores > 100);
    assertThat(found).hasSize((percentageBad ? 1 : 0) + (cores > 100 ? 1 : 0));
  }

  @Test
  void quorumErrorExactlyWhenMembersFallShort() {
    Props.qt(60)
        .forAll(integers().between(1, 20), integers().between(0, 20))
        .checkAssert(ThresholdProperties::quorumError);
  }

  private static void quorumError(int minMember, int replicas) {
    String group = CheckHarness.GROUP.replace("minMember: 3", "minMember: " + minMember);
    String sts =
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: default}\nspec:\n  replicas: "
            + replicas
            + "\n  template:\n    metadata: {labels: {scheduling.x-k8s.io/pod-group: g}}\n    spec: {containers: [{name: c}]}\n";
    List<Finding> found = run(new GangQuorumCheck(), group, sts);

    assertThat(found).hasSize(replicas < minMember ? 1 : 0);
  }
}
