package dev.hamilock.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestLoader;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodTemplate;
import dev.hamilock.preflight.model.SchedulerProfile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The guide's correct configuration passes clean, and clean because the checks saw its content. */
class GuideConfigurationTest {

  @Test
  void guideConfigurationHasNoErrorOrWarning() throws Exception {
    PreflightReport report = Fixtures.run(Fixtures.guide());

    assertThat(report.findings()).filteredOn(f -> f.severity() != Severity.INFO).isEmpty();
    assertThat(report.isClean()).isTrue();
    assertThat(report.documents()).isEqualTo(1 + 5 + 2 + 1);
    assertThat(report.sources()).hasSize(4);
  }

  @Test
  void guideConfigurationIsUnderstood() throws Exception {
    List<ManifestDocument> docs = new ArrayList<>();
    for (Path p : Fixtures.guide()) {
      docs.addAll(ManifestLoader.load(p));
    }
    ManifestModel model = ManifestModel.of(docs);

    assertThat(model.schedulerConfigurations())
        .singleElement()
        .satisfies(
            cfg -> {
              SchedulerProfile p = cfg.profiles().get(0);
              assertThat(p.schedulerName()).isEqualTo("hami-scheduler");
              assertThat(p.enables("Coscheduling")).isTrue();
              assertThat(p.disablesAt("queueSort", "PrioritySort")).isTrue();
              assertThat(cfg.extenders())
                  .singleElement()
                  .satisfies(
                      x -> {
                        assertThat(x.httpTimeout()).contains("30s");
                        assertThat(x.bindVerb()).contains("bind");
                        assertThat(x.managedResources()).contains("nvidia.com/gpumem");
                      });
            });
    assertThat(model.extenderFlags())
        .singleElement()
        .satisfies(f -> assertThat(f.nodeLockRetryTimeout().orElseThrow().text()).isEqualTo("28s"));
    assertThat(model.podGroups())
        .singleElement()
        .satisfies(g -> assertThat(g.minMember().getAsInt()).isEqualTo(4));
    assertThat(model.podTemplates())
        .hasSize(4)
        .allMatch(PodTemplate::isGangMember)
        .allMatch(t -> t.effectiveSchedulerName().equals("hami-scheduler"));
    assertThat(model.roles()).hasSize(1);
    assertThat(model.bindings())
        .singleElement()
        .satisfies(b -> assertThat(b.subjects().get(0).name()).isEqualTo("hami-scheduler"));
  }
}
