package dev.hamilock.preflight.checks;

import static dev.hamilock.preflight.checks.CheckHarness.COSCHEDULING;
import static dev.hamilock.preflight.checks.CheckHarness.GROUP;
import static dev.hamilock.preflight.checks.CheckHarness.pod;
import static dev.hamilock.preflight.checks.CheckHarness.run;
import static dev.hamilock.preflight.checks.CheckHarness.schedulerConfig;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.PreflightCheck;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.model.PodTemplate;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Branches of the standard checks that the guide-derived fixtures do not reach. */
class StandardChecksTest {

  private static final String GPU = "nvidia.com/gpu: 1";

  @Test
  void standardChecksHaveDistinctIdsInOrder() {
    List<PreflightCheck> all = StandardChecks.all();
    assertThat(all)
        .extracting(PreflightCheck::id)
        .containsExactly(
            "PF01", "PF02", "PF03", "PF04", "PF05", "PF06", "PF07", "PF08", "PF09", "PF10", "PF11",
            "PF12", "PF13", "PF14", "PF15", "PF16");
    assertThat(all)
        .extracting(PreflightCheck::name)
        .doesNotHaveDuplicates()
        .allMatch(n -> n.matches("[a-z0-9-]+"));
  }

  @Test
  void queueSortWildcardDisableCountsAndDifferingProfilesAreReported() {
    String wildcard =
        schedulerConfig(
            "      multiPoint: {enabled: [{name: Coscheduling}]}\n"
                + "      queueSort: {disabled: [{name: \"*\"}]}\n",
            "");
    assertThat(run(new QueueSortConflictCheck(), wildcard)).isEmpty();

    String two = schedulerConfig(COSCHEDULING, "") + "  - schedulerName: default-scheduler\n";
    assertThat(run(new QueueSortConflictCheck(), two))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.message()).contains("default-scheduler", "same queue-sort");
            });
  }

  @Test
  void retryFlagLastOccurrenceWinsInBothForms() {
    String cfg =
        schedulerConfig(COSCHEDULING, "  - {urlPrefix: x, bindVerb: bind, httpTimeout: 30s}\n");
    String values =
        "scheduler:\n  extender:\n    extraArgs: [\"--node-lock-retry-timeout=40s\", \"--node-lock-retry-timeout\", \"10s\"]\n";
    assertThat(run(new RetryTimeoutCheck(), cfg, values)).isEmpty();
    String reversed =
        "scheduler:\n  extender:\n    extraArgs: [\"--node-lock-retry-timeout\", \"10s\", \"--node-lock-retry-timeout=40s\"]\n";
    assertThat(run(new RetryTimeoutCheck(), cfg, reversed))
        .singleElement()
        .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.ERROR));
  }

  @Test
  void retryDefaultAgainstKubeSchedulerDefaultTimeoutIsAnError() {
    String cfg = schedulerConfig(COSCHEDULING, "  - {urlPrefix: x, bindVerb: bind}\n");
    assertThat(run(new RetryTimeoutCheck(), cfg))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.message()).contains("HAMi's default 28s", "default 5s");
              assertThat(f.location().path()).isEqualTo("extenders[0]");
            });
    // an extender without bindVerb never receives the bind
    assertThat(run(new RetryTimeoutCheck(), schedulerConfig(COSCHEDULING, "  - {urlPrefix: x}\n")))
        .isEmpty();
  }

  @Test
  void unparsableDurationsAreErrors() {
    String cfg =
        schedulerConfig(COSCHEDULING, "  - {urlPrefix: x, bindVerb: bind, httpTimeout: 30}\n");
    String values =
        "scheduler:\n  nodeLockRetryTimeout: 28 s\n  extender:\n    extraArgs: [\"--node-lock-timeout=five\"]\n";
    List<Finding> found = run(new RetryTimeoutCheck(), cfg, values);
    assertThat(found).extracting(Finding::severity).containsOnly(Severity.ERROR);
    assertThat(found)
        .extracting(f -> f.location().path())
        .containsExactlyInAnyOrder(
            "extenders[0].httpTimeout",
            "scheduler.nodeLockRetryTimeout",
            "scheduler.extender.extraArgs[0]");
  }

  @Test
  void rbacHonoursWildcardsGroupsAggregationAndResourceNames() {
    String binding =
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\n"
            + "roleRef: {kind: ClusterRole, name: r}\nsubjects: [{kind: Group, name: \"system:serviceaccounts:hami-system\"}]\n";
    String sa =
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: hami-scheduler, namespace: hami-system}\n";
    String wildcard =
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n"
            + "rules: [{apiGroups: [\"*\"], resources: [\"*\"], verbs: [\"*\"]}]\n";
    assertThat(run(new PodGroupRbacCheck(), sa, wildcard, binding)).isEmpty();

    String named =
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n"
            + "rules: [{apiGroups: [scheduling.x-k8s.io], resources: [podgroups], resourceNames: [g], verbs: [get, list, watch]}]\n";
    assertThat(run(new PodGroupRbacCheck(), sa, named, binding))
        .singleElement()
        .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.ERROR));

    String aggregating =
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n"
            + "aggregationRule: {clusterRoleSelectors: [{matchLabels: {pg: read}}]}\n---\n"
            + "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r2, labels: {pg: read}}\n"
            + "rules: [{apiGroups: [scheduling.x-k8s.io], resources: [podgroups], verbs: [get, list, watch]}]\n";
    assertThat(run(new PodGroupRbacCheck(), sa, aggregating, binding)).isEmpty();

    String otherNamespace = binding.replace("hami-system", "kube-system");
    assertThat(run(new PodGroupRbacCheck(), sa, wildcard, otherNamespace)).hasSize(1);
  }

  @Test
  void rbacWithABoundRoleMissingFromTheFilesIsOnlyAWarning() {
    String binding =
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\n"
            + "roleRef: {kind: ClusterRole, name: custom-reader}\nsubjects: [{kind: ServiceAccount, name: hami-scheduler, namespace: x}]\n";
    assertThat(run(new PodGroupRbacCheck(), binding))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.WARNING);
              assertThat(f.message()).contains("ClusterRole custom-reader", "assumed");
            });
    String systemOnly = binding.replace("custom-reader", "system:kube-scheduler");
    assertThat(run(new PodGroupRbacCheck(), systemOnly))
        .singleElement()
        .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.ERROR));
  }

  @Test
  void workloadLabelNotOnTheTemplateIsReported() {
    String deployment =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels: {scheduling.x-k8s.io/pod-group: g}\n"
            + "spec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: d}}\n    spec:\n      containers: [{name: c, image: ubuntu}]\n";
    assertThat(run(new PodGroupLabelPlacementCheck(), deployment))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.location().path())
                  .isEqualTo("metadata.labels[\"scheduling.x-k8s.io/pod-group\"]");
              assertThat(f.fix()).contains("spec.template.metadata.labels");
            });
  }

  @Test
  void podCountsFollowWorkloadKinds() {
    String label = "\n      labels: {scheduling.x-k8s.io/pod-group: g}";
    String job =
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: default}\nspec:\n  parallelism: 5\n  completions: 2\n"
            + "  template:\n    metadata:"
            + label
            + "\n    spec: {containers: [{name: c}]}\n";
    assertThat(run(new GangQuorumCheck(), GROUP, job))
        .singleElement()
        .satisfies(
            f -> assertThat(f.message()).contains("create 2 member pod(s)", "Job default/j: 2"));
    String deployment =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
            + "  template:\n    metadata:"
            + label
            + "\n    spec: {containers: [{name: c}]}\n";
    assertThat(
            run(
                new GangQuorumCheck(),
                GROUP,
                deployment,
                deployment.replace("name: d", "name: e"),
                deployment.replace("name: d", "name: f")))
        .isEmpty();
    String daemonSet = deployment.replace("Deployment", "DaemonSet");
    assertThat(run(new GangQuorumCheck(), GROUP, daemonSet))
        .singleElement()
        .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.INFO));
    String suspended = job.replace("  parallelism: 5\n", "  parallelism: 5\n  suspend: true\n");
    assertThat(run(new GangQuorumCheck(), GROUP, suspended))
        .singleElement()
        .satisfies(f -> assertThat(f.message()).contains("create 0 member pod(s)"));
  }

  @Test
  void nativePodGroupsAreMatchedBySchedulingGroup() {
    String group =
        "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: n, namespace: default}\n"
            + "spec: {schedulingPolicy: {gang: {minCount: 2}}}\n";
    String member = pod("p1", "", "  schedulingGroup: {podGroupName: n}\n", GPU);
    assertThat(run(new GangQuorumCheck(), group, member))
        .singleElement()
        .satisfies(
            f -> assertThat(f.location().path()).isEqualTo("spec.schedulingPolicy.gang.minCount"));
    assertThat(run(new GangQuorumCheck(), group, member, member.replace("p1", "p2"))).isEmpty();
    assertThat(
            run(
                new UnknownPodGroupCheck(),
                group,
                member.replace("podGroupName: n", "podGroupName: m")))
        .singleElement()
        .satisfies(
            f -> assertThat(f.location().path()).isEqualTo("spec.schedulingGroup.podGroupName"));
    assertThat(CheckHarness.model(member).podTemplates().get(0).isGangMember()).isTrue();
  }

  @Test
  void memberWithoutGpuOnTheDefaultSchedulerIsAnError() {
    String cfg = schedulerConfig(COSCHEDULING, "");
    String cpuOnly =
        pod("p", "scheduling.x-k8s.io/pod-group: g", "", "cpu: 1")
            .replace("  schedulerName: hami-scheduler\n", "");
    assertThat(run(new MemberSchedulerNameCheck(), cfg, cpuOnly))
        .singleElement()
        .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.ERROR));
    // without a Coscheduling profile PF07 stays silent (PF02 covers it)
    assertThat(run(new MemberSchedulerNameCheck(), schedulerConfig("      {}\n", ""), cpuOnly))
        .isEmpty();
  }

  @Test
  void muslImagesAreRecognisedByName() {
    assertThat(MuslImageCheck.isMusl("busybox")).isTrue();
    assertThat(MuslImageCheck.isMusl("docker.io/library/busybox:1.36.1-musl")).isTrue();
    assertThat(MuslImageCheck.isMusl("busybox:1.36-glibc")).isFalse();
    assertThat(MuslImageCheck.isMusl("alpine:3.20")).isTrue();
    assertThat(MuslImageCheck.isMusl("golang:1.22-alpine@sha256:abc")).isTrue();
    assertThat(MuslImageCheck.isMusl("registry:5000/team/alpine-cuda:1")).isTrue();
    assertThat(MuslImageCheck.isMusl("ubuntu:22.04")).isFalse();
    assertThat(MuslImageCheck.isMusl("nvidia/cuda:12.4.1-base-ubuntu22.04")).isFalse();
    assertThat(MuslImageCheck.isMusl("registry:5000/alpinist/app:1")).isFalse();
    // without HAMi resources the image is not the checker's business
    assertThat(
            run(new MuslImageCheck(), pod("p", "", "", "cpu: 1").replace("ubuntu:22.04", "alpine")))
        .isEmpty();
  }

  @Test
  void gpuValuesThatAreNotQuantitiesOrFractionsAreReported() {
    List<Finding> found =
        run(
            new GpuResourceValuesCheck(),
            pod(
                "p",
                "",
                "",
                "nvidia.com/gpu: \"0.5\", nvidia.com/gpumem: 3000MB, nvidia.com/gpucores: \"-5\", "
                    + "nvidia.com/gpumem-percentage: \"50.5\""));
    assertThat(found)
        .extracting(f -> f.severity() + " " + f.location().path())
        .containsExactlyInAnyOrder(
            "ERROR spec.containers[0].resources.limits[\"nvidia.com/gpu\"]",
            "ERROR spec.containers[0].resources.limits[\"nvidia.com/gpumem\"]",
            "WARNING spec.containers[0].resources.limits[\"nvidia.com/gpucores\"]",
            "WARNING spec.containers[0].resources.limits[\"nvidia.com/gpumem-percentage\"]");
    assertThat(
            run(
                new GpuResourceValuesCheck(),
                pod("p", "", "", "nvidia.com/gpu: 2, nvidia.com/gpumem: 8Ki")))
        .isEmpty();
  }

  @Test
  void emptyPodGroupLabelIsAWarning() {
    assertThat(
            run(
                new PodGroupLabelPlacementCheck(),
                pod("p", "scheduling.x-k8s.io/pod-group: \"\"", "", GPU)))
        .singleElement()
        .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.WARNING));
    assertThat(PodTemplate.POD_GROUP_LABEL).isEqualTo("scheduling.x-k8s.io/pod-group");
  }
}
