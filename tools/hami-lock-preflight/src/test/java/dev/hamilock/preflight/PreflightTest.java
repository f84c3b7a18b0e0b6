package dev.hamilock.preflight;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.PreflightCheck;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestLoader;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.testing.logs.LogCapture;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Preflight entry point: embedders' checks, already-parsed documents, failure containment. */
class PreflightTest {

  /** An embedder's check: every Pod must set a namespace. */
  private static final PreflightCheck NAMESPACED =
      new PreflightCheck() {
        @Override
        public String id() {
          return "X01";
        }

        @Override
        public String name() {
          return "pod-namespace";
        }

        @Override
        public String description() {
          return "Pods must set metadata.namespace.";
        }

        @Override
        public List<Finding> run(ManifestModel model) {
          return model.podTemplates().stream()
              .filter(t -> t.namespace().isEmpty())
              .map(
                  t ->
                      new Finding(
                          id(),
                          name(),
                          Severity.WARNING,
                          t.location("metadata"),
                          t.describe() + " has no namespace",
                          "Set metadata.namespace."))
              .toList();
        }
      };

  @Test
  void embedderCheckRunsNextToTheStandardOnesOnParsedDocuments() throws Exception {
    List<ManifestDocument> docs =
        ManifestLoader.parse(
            "inline",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: ubuntu}]}\n");
    PreflightReport report =
        Preflight.builder().addStandardChecks().add(NAMESPACED).build().check(docs);

    assertThat(report.sources()).containsExactly("inline");
    assertThat(report.findings())
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.checkId()).isEqualTo("X01");
              assertThat(f.location().describe()).isEqualTo("inline#1 metadata (line 3)");
            });
    assertThat(report.hasErrors()).isFalse();
    assertThat(report.isClean()).isFalse();
  }

  @Test
  void aThrowingCheckBecomesAnErrorFindingInsteadOfAbortingTheRun() throws Exception {
    PreflightCheck broken =
        new PreflightCheck() {
          @Override
          public String id() {
            return "X02";
          }

          @Override
          public String name() {
            return "broken";
          }

          @Override
          public String description() {
            return "always throws";
          }

          @Override
          public List<Finding> run(ManifestModel model) {
            throw new IllegalStateException("boom");
          }
        };
    PreflightReport report;
    try (LogCapture log = LogCapture.start()) {
      report =
          Preflight.builder()
              .add(broken)
              .add(NAMESPACED)
              .build()
              .check(ManifestLoader.parse("i", "kind: Pod\nmetadata: {name: p}\n"));
      // the bug in a check is logged once with its stack (captured here, not printed)
      assertThat(log.expect("WARN dev\\.hamilock\\.preflight\\.Preflight - preflight check X02"))
          .singleElement()
          .asString()
          .contains("IllegalStateException: boom");
    }

    assertThat(report.findings()).extracting(Finding::checkId).containsExactly("X01", "X02");
    assertThat(report.findings().get(1).message()).contains("boom");
    assertThat(report.hasErrors()).isTrue();
  }

  @Test
  void builderRejectsNoChecksAndDuplicateIds() {
    assertThatThrownBy(() -> Preflight.builder().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checks");
    assertThatThrownBy(() -> Preflight.builder().addStandardChecks().addStandardChecks().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate check id PF01");
  }
}
