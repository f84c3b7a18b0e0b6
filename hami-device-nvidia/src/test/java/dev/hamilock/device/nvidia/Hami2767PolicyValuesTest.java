package dev.hamilock.device.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.testing.logs.LogCapture;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HAMi#2767 / PR#2769, HAMi#2995: policy values are trimmed and compared exactly; an unknown pod
 * annotation is ignored with a warning and the configured default stands; an unknown default (flag,
 * builder) is refused naming the setting, the value and the accepted words.
 */
class Hami2767PolicyValuesTest {
  /** binpack defaults, as a cluster running --gpu-scheduler-policy=binpack. */
  static final PodFitter BINPACK = PodFitter.create(FilterTest.REG, "binpack", "binpack");

  FilterResult run(Map<String, String> annotations) throws Exception {
    return BINPACK.filter(
        FilterTest.pod(annotations, List.of(), List.of(FilterTest.gpu("c", 1000, 20))),
        FilterTest.cluster());
  }

  /** The fitter logs each ignored annotation once at WARN: captured and asserted, not printed. */
  private LogCapture log;

  @BeforeEach
  void captureLog() {
    log = LogCapture.start();
  }

  @AfterEach
  void closeLog() {
    log.close();
  }

  private List<String> warned(String annotation) {
    return log.expect(
        "WARN dev\\.hamilock\\.device\\.(spi\\.fit\\.PodFitter|nvidia\\.NvidiaSelectors) - pod .*: "
            + "ignoring unrecognized "
            + Pattern.quote(annotation)
            + "=");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "binpak",
        "Binpack",
        "BINPACK",
        "spread!",
        "",
        "   ",
        "binpack,,spread",
        "bin pack"
      })
  void unknownDevicePolicyAnnotationKeepsTheBinpackDefaultAndWarns(String value) throws Exception {
    FilterResult r = run(Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, value));

    // binpack on node2 takes the fuller device4 (spread, the old fallback, took device3)
    assertThat(FilterTest.chosen(r)).isEqualTo("device4");
    assertThat(r.warnings())
        .singleElement()
        .satisfies(
            w -> {
              assertThat(w.annotation()).isEqualTo(HamiAnnotations.GPU_SCHEDULER_POLICY);
              assertThat(w.value()).isEqualTo(value);
              assertThat(w.podKey()).isEqualTo("default/p");
              assertThat(w.message())
                  .contains(
                      "\"" + value + "\"",
                      "binpack, spread, numa, mutex, topology-aware",
                      "configured default \"binpack\" used");
            });
    assertThat(warned(HamiAnnotations.GPU_SCHEDULER_POLICY)).hasSize(1);
  }

  @Test
  void knownValuesAreTrimmedAndApplyWithoutWarning() throws Exception {
    FilterResult spread = run(Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, "  spread "));
    assertThat(FilterTest.chosen(spread)).isEqualTo("device3");
    assertThat(spread.warnings()).isEmpty();
    FilterResult binpack = run(Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, " binpack\t"));
    assertThat(FilterTest.chosen(binpack)).isEqualTo("device4");
    assertThat(binpack.warnings()).isEmpty();
    assertThat(log.entries()).isEmpty();
    assertThat(
            BINPACK
                .requests(
                    FilterTest.pod(
                        Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, " spread , numa"),
                        List.of(),
                        List.of(FilterTest.gpu("c", 1, 1))))
                .gpuPolicy()
                .raw())
        .isEqualTo("spread , numa");
  }

  @Test
  void unknownNodePolicyAnnotationKeepsTheDefault() throws Exception {
    // node scores: node1 3.0, node2 8.0; binpack picks node2, spread would pick node1
    FilterResult r = run(Map.of(HamiAnnotations.NODE_SCHEDULER_POLICY, "Spread"));
    assertThat(r.bestNode()).contains("node2");
    assertThat(r.warnings())
        .extracting(AnnotationWarning::annotation)
        .containsExactly(HamiAnnotations.NODE_SCHEDULER_POLICY);
    assertThat(warned(HamiAnnotations.NODE_SCHEDULER_POLICY)).hasSize(1);
    FilterResult trimmed = run(Map.of(HamiAnnotations.NODE_SCHEDULER_POLICY, " spread "));
    assertThat(trimmed.bestNode()).contains("node1");
    assertThat(trimmed.warnings()).isEmpty();
  }

  @Test
  void unknownNumaBindWordIsFalseWithAWarning() throws Exception {
    PodRequests r =
        BINPACK.requests(
            FilterTest.pod(
                Map.of(PodFitter.NUMA_BIND_ANNOTATION, "yes"),
                List.of(),
                List.of(FilterTest.gpu("c", 1, 1))));
    assertThat(r.numaBind()).isFalse();
    assertThat(r.warnings())
        .extracting(AnnotationWarning::annotation)
        .containsExactly(PodFitter.NUMA_BIND_ANNOTATION);
    assertThat(warned(PodFitter.NUMA_BIND_ANNOTATION)).hasSize(1);
    assertThat(
            BINPACK
                .requests(
                    FilterTest.pod(
                        Map.of(PodFitter.NUMA_BIND_ANNOTATION, "True"),
                        List.of(),
                        List.of(FilterTest.gpu("c", 1, 1))))
                .numaBind())
        .isTrue();
  }

  @Test
  void unknownDefaultsAreRefusedNamingSettingValueAndWords() {
    assertThatThrownBy(() -> PodFitter.create(FilterTest.REG, "binpak", "binpack"))
        .isInstanceOf(PolicyValues.InvalidPolicyValueException.class)
        .hasMessageContaining("defaultGpuPolicy")
        .hasMessageContaining("\"binpak\"")
        .hasMessageContaining("binpack, spread, numa, mutex, topology-aware");
    assertThatThrownBy(() -> PodFitter.create(FilterTest.REG, "spread", "Binpack"))
        .isInstanceOf(PolicyValues.InvalidPolicyValueException.class)
        .hasMessageContaining("defaultNodePolicy")
        .hasMessageContaining("one of binpack, spread");
  }

  @Test
  void registrationModeIsAnEnumeratedWord() {
    String reg =
        "[{\"id\":\"GPU-0\",\"count\":10,\"devmem\":16000,\"devcore\":100,\"type\":\"NVIDIA-A100\","
            + "\"mode\":\"MIG\",\"health\":true}]";
    assertThatThrownBy(
            () ->
                new NvidiaVendor()
                    .decodeNodeDevices(
                        dev.hamilock.device.spi.view.NodeView.of(
                            "n", Map.of(NvidiaAnnotations.REGISTER, reg))))
        .hasMessageContaining("unknown mode \"MIG\"")
        .hasMessageContaining("hami-core, mig, mps");
  }
}
