package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.PreflightCheck;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import dev.hamilock.preflight.model.ManifestModel;
import java.util.ArrayList;
import java.util.List;

/** Runs one check over inline YAML snippets (one string per file). */
final class CheckHarness {

  private CheckHarness() {}

  static ManifestModel model(String... files) {
    List<ManifestDocument> docs = new ArrayList<>();
    try {
      for (int i = 0; i < files.length; i++) {
        docs.addAll(ManifestLoader.parse("f" + i + ".yaml", files[i]));
      }
      return ManifestModel.of(docs);
    } catch (ManifestException e) {
      throw new AssertionError(e);
    }
  }

  static List<Finding> run(PreflightCheck check, String... files) {
    return check.run(model(files));
  }

  static String schedulerConfig(String plugins, String extender) {
    return "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\nprofiles:\n"
        + "  - schedulerName: hami-scheduler\n    plugins:\n"
        + plugins
        + (extender.isEmpty() ? "" : "extenders:\n" + extender);
  }

  static final String COSCHEDULING =
      "      multiPoint: {enabled: [{name: Coscheduling}]}\n"
          + "      queueSort: {disabled: [{name: PrioritySort}]}\n";

  static String pod(String name, String labels, String extraSpec, String limits) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: "
        + name
        + "\n  namespace: default\n  labels: {"
        + labels
        + "}\n"
        + "spec:\n  schedulerName: hami-scheduler\n"
        + extraSpec
        + "  containers:\n    - name: c\n      image: ubuntu:22.04\n"
        + "      resources:\n        limits: {"
        + limits
        + "}\n";
  }

  static final String GROUP =
      "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: default}\n"
          + "spec: {minMember: 3}\n";
}
