package dev.hamilock.examples.gang.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.doubles;

import dev.hamilock.examples.gang.DemoOptions;
import dev.hamilock.examples.gang.run.MemberResult;
import dev.hamilock.examples.gang.run.ModeResult;
import dev.hamilock.testing.generators.Props;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The side-by-side verdict claims "faster" only when gang mode bound every pod sooner. */
class TextReportTest {

  static ModeResult run(DemoOptions.Mode mode, boolean gangMembers, Optional<Double> toBound) {
    MemberResult p =
        new MemberResult(
            "default/p",
            gangMembers,
            0,
            "node-a",
            List.of("GPU-0"),
            3000,
            30,
            0,
            1,
            1,
            toBound.isPresent() ? "BOUND" : "CONTENDED",
            "",
            toBound,
            Optional.empty());
    return new ModeResult(
        mode,
        "test",
        1,
        List.of(p),
        gangMembers ? ModeResult.PERMIT_RELEASE : ModeResult.FIRST_FILTER,
        toBound,
        Optional.empty(),
        Map.of(),
        List.of(),
        List.of(),
        List.of(),
        Map.of());
  }

  /** 200 pairs of times to bind the gang, 0.1–20000 ms each. */
  @Test
  void fasterOnlyWhenGangModeBoundSooner() {
    Props.qt(200)
        .forAll(doubles().between(0.1, 20000), doubles().between(0.1, 20000))
        .checkAssert(TextReportTest::fasterOnlyWhenSooner);
  }

  private static void fasterOnlyWhenSooner(double gang, double failFast) {
    String v =
        TextReport.comparison(
            run(DemoOptions.Mode.GANG, true, Optional.of(gang)),
            run(DemoOptions.Mode.FAIL_FAST, true, Optional.of(failFast)));
    assertThat(v.contains("faster")).as(v).isEqualTo(gang < failFast);
    assertThat(v.contains("slower")).as(v).isEqualTo(gang > failFast);
    assertThat(v).contains(TextReport.ms(gang) + " ms").contains(TextReport.ms(failFast) + " ms");
  }

  @Test
  void ratioKeepsADecimalBelowTen() {
    String v =
        TextReport.comparison(
            run(DemoOptions.Mode.GANG, true, Optional.of(200.0)),
            run(DemoOptions.Mode.FAIL_FAST, true, Optional.of(260.0)));
    assertThat(v).startsWith("gang-aware binding bound the gang 1.3x faster");
    assertThat(
            TextReport.comparison(
                run(DemoOptions.Mode.GANG, true, Optional.of(265.6)),
                run(DemoOptions.Mode.FAIL_FAST, true, Optional.of(7252.5))))
        .contains(" 27x faster");
  }

  @Test
  void noGangMembersMakesNoSpeedClaimEvenWhenGangModeWasFaster() {
    String v =
        TextReport.comparison(
            run(DemoOptions.Mode.GANG, false, Optional.of(100.0)),
            run(DemoOptions.Mode.FAIL_FAST, false, Optional.of(5000.0)));
    assertThat(v)
        .startsWith("no pod is a gang member")
        .doesNotContain("faster")
        .doesNotContain("slower");
  }

  @Test
  void aRunThatDidNotBindEveryPodIsNamedNotTimed() {
    assertThat(
            TextReport.comparison(
                run(DemoOptions.Mode.GANG, true, Optional.of(100.0)),
                run(DemoOptions.Mode.FAIL_FAST, true, Optional.empty())))
        .isEqualTo("gang-aware binding bound every pod; fail-fast re-queueing did not");
    assertThat(
            TextReport.comparison(
                run(DemoOptions.Mode.GANG, true, Optional.empty()),
                run(DemoOptions.Mode.FAIL_FAST, true, Optional.of(100.0))))
        .isEqualTo("gang-aware binding did not bind every pod; fail-fast re-queueing did");
  }
}
