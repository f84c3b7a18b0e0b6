package dev.hamilock.preflight.checks;

import static dev.hamilock.preflight.checks.CheckHarness.COSCHEDULING;
import static dev.hamilock.preflight.checks.CheckHarness.pod;
import static dev.hamilock.preflight.checks.CheckHarness.run;
import static dev.hamilock.preflight.checks.CheckHarness.schedulerConfig;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * kubernetes#122494 / PR#122503: since that change an ignorable extender's failed bind falls back
 * to the default binder, so a lock-contention or retry-timeout answer becomes a Binding without the
 * lock or the allocation. PF11 reports every extender setting that lets a GPU pod be bound without
 * the extender's bind.
 */
class Kubernetes122494IgnorableBindTest {
  static final ExtenderBindBypassCheck CHECK = new ExtenderBindBypassCheck();

  static String extender(String extra, String managed) {
    return "  - urlPrefix: https://127.0.0.1:443\n    filterVerb: filter\n"
        + extra
        + "    httpTimeout: 30s\n    managedResources:\n"
        + managed;
  }

  static final String HAMI_MANAGED =
      "      - {name: nvidia.com/gpu, ignoredByScheduler: true}\n"
          + "      - {name: nvidia.com/gpumem, ignoredByScheduler: true}\n";
  static final String GPU_POD = pod("w1", "", "", "nvidia.com/gpu: 1, nvidia.com/gpumem: 3000");

  static List<Finding> check(String extender, String... pods) {
    String[] files = new String[pods.length + 1];
    files[0] = schedulerConfig(COSCHEDULING, extender);
    System.arraycopy(pods, 0, files, 1, pods.length);
    return run(CHECK, files);
  }

  @Test
  void anIgnorableBindingExtenderIsAnErrorWithTheFix() {
    List<Finding> f =
        check(extender("    bindVerb: bind\n    ignorable: true\n", HAMI_MANAGED), GPU_POD);

    assertThat(f)
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.checkId()).isEqualTo("PF11");
              assertThat(x.severity()).isEqualTo(Severity.ERROR);
              assertThat(x.location().path()).isEqualTo("extenders[0].ignorable");
              assertThat(x.message()).contains("ignorable", "default binder", "kubernetes#122503");
              assertThat(x.fix()).contains("ignorable: false");
            });
  }

  @Test
  void theGuidesExtenderAndIgnorableFalseAreClean() {
    assertThat(check(extender("    bindVerb: bind\n", HAMI_MANAGED), GPU_POD)).isEmpty();
    assertThat(check(extender("    bindVerb: bind\n    ignorable: false\n", HAMI_MANAGED), GPU_POD))
        .isEmpty();
    // ignoredByScheduler only affects kube-scheduler's own resource fit, never the binder
    assertThat(
            check(
                extender(
                    "    bindVerb: bind\n",
                    "      - {name: nvidia.com/gpu, ignoredByScheduler: false}\n"),
                GPU_POD))
        .isEmpty();
  }

  @Test
  void aHamiExtenderWithoutBindVerbIsAnError() {
    assertThat(check(extender("", HAMI_MANAGED), GPU_POD))
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.severity()).isEqualTo(Severity.ERROR);
              assertThat(x.location().path()).isEqualTo("extenders[0]");
              assertThat(x.message()).contains("no bindVerb", "default binder");
              assertThat(x.fix()).contains("bindVerb: bind");
            });
  }

  @Test
  void managedResourcesMustCoverTheGpuCountAndEveryGpuPod() {
    String memOnly = "      - {name: nvidia.com/gpumem, ignoredByScheduler: true}\n";
    String countOnly = pod("w2", "", "", "nvidia.com/gpu: 1");

    List<Finding> f = check(extender("    bindVerb: bind\n", memOnly), GPU_POD, countOnly);

    assertThat(f)
        .extracting(x -> x.severity() + " " + x.location().path())
        .containsExactlyInAnyOrder("WARNING extenders[0].managedResources", "ERROR spec");
    assertThat(f)
        .filteredOn(x -> x.severity() == Severity.ERROR)
        .singleElement()
        .satisfies(
            x ->
                assertThat(x.message())
                    .contains(
                        "Pod default/w2",
                        "[nvidia.com/gpu]",
                        "[nvidia.com/gpumem]",
                        "never sends it to the extender"));
    // w1 names nvidia.com/gpumem, so kube-scheduler's IsInterested sends it: no finding for it
    assertThat(f).noneMatch(x -> x.message().contains("w1"));
  }

  @Test
  void anInitContainerNamingAManagedResourceMakesThePodInteresting() {
    String memOnly = "      - {name: nvidia.com/gpumem}\n";
    String withInit =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: w3, namespace: default}\nspec:\n"
            + "  schedulerName: hami-scheduler\n  initContainers:\n    - name: i\n      image: ubuntu:22.04\n"
            + "      resources: {requests: {nvidia.com/gpumem: 10}}\n  containers:\n    - name: c\n"
            + "      image: ubuntu:22.04\n      resources: {limits: {nvidia.com/gpu: 1}}\n";
    assertThat(check(extender("    bindVerb: bind\n", memOnly), withInit))
        .noneMatch(x -> x.severity() == Severity.ERROR);
  }

  @Test
  void aGpuPodOfAnotherSchedulerIsAnErrorButTheDefaultNameIsLeftToTheWebhook() {
    String other =
        pod("w4", "", "", "nvidia.com/gpu: 1")
            .replace("schedulerName: hami-scheduler", "schedulerName: my-scheduler");
    String defaulted =
        pod("w5", "", "", "nvidia.com/gpu: 1").replace("  schedulerName: hami-scheduler\n", "");

    List<Finding> f = check(extender("    bindVerb: bind\n", HAMI_MANAGED), other, defaulted);

    assertThat(f)
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.severity()).isEqualTo(Severity.ERROR);
              assertThat(x.location().path()).isEqualTo("spec.schedulerName");
              assertThat(x.message()).contains("w4", "my-scheduler", "hami-scheduler");
            });
  }

  @Test
  void anExtenderWithoutManagedResourcesButWithBindVerbGetsEveryPod() {
    String all =
        "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\nprofiles:\n"
            + "  - schedulerName: hami-scheduler\nextenders:\n  - urlPrefix: http://x\n    bindVerb: bind\n"
            + "    ignorable: true\n";
    assertThat(run(CHECK, all, GPU_POD))
        .extracting(x -> x.location().path())
        .containsExactly("extenders[0].ignorable");
    String noHami =
        "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\nprofiles:\n"
            + "  - schedulerName: other\nextenders:\n  - urlPrefix: http://x\n    filterVerb: filter\n"
            + "    managedResources: [{name: example.com/fpga}]\n";
    assertThat(run(CHECK, noHami, GPU_POD)).as("not a HAMi extender: nothing to say").isEmpty();
  }
}
