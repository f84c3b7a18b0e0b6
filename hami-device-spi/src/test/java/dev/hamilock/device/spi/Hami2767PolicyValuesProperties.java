package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Props;
import dev.hamilock.testing.logs.LogCapture;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * HAMi#2767 / PR#2769 as properties (QuickTheories): over generated policy texts mixing accepted
 * words, near-misses ({@code binpak}, {@code Binpack}), blanks and separators, a device policy is
 * accepted exactly when every trimmed comma member is an accepted word; an accepted value is the
 * trimmed text; an annotation that is not accepted leaves the configured default and one warning.
 */
class Hami2767PolicyValuesProperties {
  static final List<String> PIECES =
      List.of(
          "binpack",
          "spread",
          "numa",
          "mutex",
          "topology-aware",
          "binpak",
          "Binpack",
          "SPREAD",
          "",
          " ",
          "  binpack ",
          "\tspread",
          "topology",
          "mutex ",
          "x");

  /** PodFitter's WARN for an unrecognized device policy (HAMi#2767). */
  static final String UNRECOGNIZED_GPU_POLICY =
      "WARN dev\\.hamilock\\.device\\.spi\\.fit\\.PodFitter - pod default/p: ignoring unrecognized "
          + "hami\\.io/gpu-scheduler-policy=";

  static final PodFitter FITTER =
      PodFitter.create(
          VendorRegistry.builder().register(new FakeVendor("FAKEGPU", "fake.example")).build(),
          "binpack",
          "binpack");

  /** Texts built from 1..4 pieces joined by "," or ", ". */
  static Gen<String> texts() {
    Gen<List<Integer>> picks =
        lists().of(integers().between(0, PIECES.size() - 1)).ofSizeBetween(1, 4);
    return picks.zip(
        integers().between(0, 1),
        (ix, sep) -> {
          StringBuilder b = new StringBuilder();
          for (int i = 0; i < ix.size(); i++) {
            if (i > 0) {
              b.append(sep == 0 ? "," : ", ");
            }
            b.append(PIECES.get(ix.get(i)));
          }
          return b.toString();
        });
  }

  static boolean allWords(String text) {
    if (text.isBlank()) {
      return false;
    }
    for (String m : text.split(",", -1)) {
      if (!PolicyValues.GPU_POLICY_WORDS.contains(m.trim())) {
        return false;
      }
    }
    return true;
  }

  @Test
  void acceptedExactlyWhenEveryTrimmedMemberIsAWord() {
    Props.qt(2000)
        .forAll(texts())
        .checkAssert(
            text -> {
              assertThat(PolicyValues.gpuPolicy(text).isPresent())
                  .as(text)
                  .isEqualTo(allWords(text));
              PolicyValues.gpuPolicy(text)
                  .ifPresent(
                      v -> {
                        assertThat(v).isEqualTo(text.trim());
                        assertThat(PolicyValues.gpuPolicy(v)).contains(v);
                      });
            });
  }

  @Test
  void anUnacceptedAnnotationKeepsTheDefaultWithOneWarning() {
    Props.qt(1000)
        .forAll(texts())
        .checkAssert(
            text -> {
              PodView pod =
                  PodView.builder("default", "p")
                      .annotations(Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, text))
                      .build();
              PodRequests r;
              List<String> logged;
              try (LogCapture log = LogCapture.start()) {
                r = FITTER.requests(pod);
                logged = log.expect(UNRECOGNIZED_GPU_POLICY);
              } catch (Exception e) {
                throw new AssertionError(e);
              }
              if (allWords(text)) {
                assertThat(r.gpuPolicy().raw()).isEqualTo(text.trim());
                assertThat(r.warnings()).isEmpty();
                assertThat(logged).isEmpty();
              } else {
                assertThat(r.gpuPolicy().raw()).as(text).isEqualTo("binpack");
                assertThat(r.gpuPolicy().isBinpack()).isTrue();
                assertThat(r.warnings())
                    .singleElement()
                    .satisfies(w -> assertThat(w.value()).isEqualTo(text));
                assertThat(logged).as("one WARN (captured, not printed)").hasSize(1);
              }
            });
  }

  @Test
  void nodePolicyIsOneTrimmedWord() {
    Props.qt(1000)
        .forAll(texts())
        .checkAssert(
            text ->
                assertThat(PolicyValues.nodePolicy(text).isPresent())
                    .as(text)
                    .isEqualTo(text.trim().equals("binpack") || text.trim().equals("spread")));
  }
}
