package dev.hamilock.preflight;

import static dev.hamilock.preflight.Fixtures.of;
import static dev.hamilock.preflight.Fixtures.resource;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * PF13…PF16 on the DRA drivers' real shapes (src/test/resources/dra, each file's first comment says
 * which chart template or driver it comes from) beside HAMi's rendered chart
 * (helm/hami-render.yaml, whose extender manages nvidia.com/gpu, gpumem, gpucores,
 * gpumem-percentage and priority): each check fires on the hazard and stays quiet without it.
 */
class DraHazardsTest {

  private static List<Finding> run(String check, String... draFiles) throws ManifestException {
    List<Path> files = new ArrayList<>(List.of(resource("helm/hami-render.yaml")));
    for (String f : draFiles) {
      files.add(resource("dra/" + f));
    }
    return of(Preflight.standard().run(files), check);
  }

  private static List<Finding> inline(String check, String... yaml) throws ManifestException {
    List<dev.hamilock.preflight.manifest.ManifestDocument> docs = new ArrayList<>();
    for (int i = 0; i < yaml.length; i++) {
      docs.addAll(ManifestLoader.parse("f" + i + ".yaml", yaml[i]));
    }
    return of(Preflight.standard().check(docs), check);
  }

  @Test
  void pf13NvidiaChartsGpuClassMappingTheServedNvidiaGpuIsAnError() throws Exception {
    List<Finding> f = run("PF13", "nvidia-deviceclasses.yaml");

    assertThat(f)
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.severity()).isEqualTo(Severity.ERROR);
              assertThat(x.location().source()).endsWith("nvidia-deviceclasses.yaml");
              assertThat(x.location().document()).isEqualTo(1);
              assertThat(x.location().path()).isEqualTo("spec.extendedResourceName");
              assertThat(x.message())
                  .contains("DeviceClass gpu.nvidia.com", "nvidia.com/gpu", "KAI-Scheduler#1177");
            });
  }

  @Test
  void pf13ClassesWithoutOrWithAnUnservedNameAreClean() throws Exception {
    assertThat(run("PF13", "hami-dra-deviceclass.yaml")).isEmpty();
    String other =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: nic.example.com}\n"
            + "spec: {extendedResourceName: example.com/nic}\n";
    assertThat(inline("PF13", other)).isEmpty();
  }

  @Test
  void pf13ServedNamesComeFromTheExtendersManagedResources() throws Exception {
    String cfg =
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            + "profiles: [{schedulerName: hami-scheduler}]\n"
            + "extenders: [{urlPrefix: x, bindVerb: bind, managedResources:"
            + " [{name: nvidia.com/gpu}, {name: example.com/vgpu}]}]\n";
    String cls =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: vgpu.example.com}\n"
            + "spec: {extendedResourceName: example.com/vgpu}\n";
    assertThat(inline("PF13", cfg, cls)).extracting(Finding::checkId).containsExactly("PF13");
    assertThat(inline("PF13", cls)).as("no configuration: HAMi's default names").isEmpty();
  }

  @Test
  void pf14TwoClassesMappingNvidiaGpuWarnAndNameTheNewestWhenTimestampsAreKnown() throws Exception {
    List<Finding> f =
        run("PF14", "nvidia-deviceclasses.yaml", "hami-dra-deviceclass-extended.yaml");
    assertThat(f)
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.severity()).isEqualTo(Severity.WARNING);
              assertThat(x.location().source()).endsWith("hami-dra-deviceclass-extended.yaml");
              assertThat(x.message())
                  .contains(
                      "gpu.nvidia.com, hami-core-gpu.project-hami.io",
                      "nvidia.com/gpu",
                      "depends on the order");
            });

    String older =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: a-old,"
            + " creationTimestamp: \"2026-01-01T00:00:00Z\"}\nspec: {extendedResourceName: x.io/gpu}\n";
    String newer =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: z-new,"
            + " creationTimestamp: \"2026-06-01T00:00:00Z\"}\nspec: {extendedResourceName: x.io/gpu}\n";
    String tie =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: m-tie,"
            + " creationTimestamp: \"2026-06-01T00:00:00Z\"}\nspec: {extendedResourceName: x.io/gpu}\n";
    assertThat(inline("PF14", older, newer))
        .singleElement()
        .satisfies(x -> assertThat(x.message()).contains("it uses z-new"));
    assertThat(inline("PF14", older, newer, tie))
        .singleElement()
        .satisfies(x -> assertThat(x.message()).contains("it uses m-tie"));
  }

  @Test
  void pf14OneClassPerNameIsClean() throws Exception {
    assertThat(run("PF14", "nvidia-deviceclasses.yaml", "hami-dra-deviceclass.yaml")).isEmpty();
  }

  @Test
  void pf15HamiDraWebhookRewritesTheServedPodInDefault() throws Exception {
    List<Finding> f = run("PF15", "hami-dra-webhook.yaml", "gpu-pod.yaml");
    assertThat(f)
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.severity()).isEqualTo(Severity.ERROR);
              assertThat(x.location().path()).isEqualTo("webhooks[0]");
              assertThat(x.message()).contains("mutate.hami.io", "Pod default/gpu-pod");
            });
    assertThat(run("PF15", "hami-dra-webhook.yaml"))
        .as("no pod given: a pod in default stands in")
        .singleElement()
        .satisfies(x -> assertThat(x.message()).contains("namespace default"));
  }

  @Test
  void pf15HamisOwnWebhookAndADraWebhookScopedElsewhereAreClean() throws Exception {
    assertThat(run("PF15", "hami-webhook.yaml", "gpu-pod.yaml")).isEmpty();
    String scoped =
        "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
            + "metadata: {name: hami-dra-mutatingwebhookconfiguration}\nwebhooks:\n"
            + "  - name: mutate.hami.io\n"
            + "    clientConfig: {service: {name: hami-dra-dra-webhook, namespace: hami-system}}\n"
            + "    rules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE],"
            + " resources: [pods]}]\n"
            + "    namespaceSelector: {matchLabels: {dra: enabled}}\n";
    String pod = java.nio.file.Files.readString(resource("dra/gpu-pod.yaml"));
    assertThat(inline("PF15", scoped, pod)).isEmpty();
    String labelled =
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {dra: enabled}}\n";
    assertThat(inline("PF15", scoped, pod, labelled))
        .as("the same webhook once the pod's namespace carries its label")
        .hasSize(1);
  }

  @Test
  void pf16SharedHamiDraDevicesOnAHamiNodeAreAnError() throws Exception {
    List<Finding> f = run("PF16", "hami-dra-resourceslice.yaml", "node-hami.yaml");
    assertThat(f)
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.severity()).isEqualTo(Severity.ERROR);
              assertThat(x.location().path()).isEqualTo("spec.devices[0].allowMultipleAllocations");
              assertThat(x.message()).contains("hami-gpu-0, hami-gpu-1", "node gpu-node-1");
            });
    assertThat(run("PF16", "hami-dra-resourceslice.yaml"))
        .as("node not given")
        .singleElement()
        .satisfies(x -> assertThat(x.severity()).isEqualTo(Severity.WARNING));
  }

  @Test
  void pf16ExclusiveDevicesOrADraOnlyNodeAreClean() throws Exception {
    assertThat(run("PF16", "nvidia-resourceslice.yaml", "node-hami.yaml")).isEmpty();
    assertThat(run("PF16", "hami-dra-resourceslice.yaml", "node-dra-only.yaml")).isEmpty();
  }

  @Test
  void hamisChartWithoutDraObjectsHasNoDraFinding() throws Exception {
    PreflightReport r = Preflight.standard().run(List.of(resource("helm/hami-render.yaml")));
    assertThat(r.findings())
        .extracting(Finding::checkId)
        .doesNotContain("PF13", "PF14", "PF15", "PF16");
  }

  @Test
  void readmeShowsThisRunsOutputOnTheDraShapes() throws Exception {
    String d = "src/test/resources/dra/";
    String actual =
        HelmRenderTest.run(
            HelmRenderTest.RENDER,
            d + "nvidia-deviceclasses.yaml",
            d + "hami-dra-deviceclass-extended.yaml",
            d + "hami-dra-webhook.yaml",
            d + "gpu-pod.yaml",
            d + "hami-dra-resourceslice.yaml",
            d + "node-hami.yaml");
    java.nio.file.Files.createDirectories(Path.of("target"));
    java.nio.file.Files.writeString(Path.of("target/readme-dra.txt"), actual);
    String readme = java.nio.file.Files.readString(Path.of("README.md"));
    assertThat(HelmRenderTest.readmeBlock(readme, "dra-output"))
        .as("README block vs target/readme-dra.txt")
        .isEqualTo(actual);
  }
}
