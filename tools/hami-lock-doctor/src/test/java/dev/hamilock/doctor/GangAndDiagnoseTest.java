package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code gang} on the guide's manifests with each of the guide's mistakes, and {@code diagnose}
 * finding each troubleshooting symptom — and nothing on a healthy run of the gang demo (the guide's
 * gang bound through hami-lock's bind flow with a device plugin serving every pod).
 */
class GangAndDiagnoseTest {

  ApiServerEmulator k8s;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    k8s.createNamespace("hami-system");
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  private void guide(
      Function<Map<String, Object>, Map<String, Object>> gangChange,
      Function<Map<String, Object>, Map<String, Object>> configChange) {
    Fixtures.applyGuide(k8s, "scheduler-config.yaml", configChange);
    Fixtures.applyGuide(k8s, "gang-training.yaml", gangChange);
    Fixtures.gpuNode(k8s, "gpu-node-a");
    Fixtures.gpuNode(k8s, "gpu-node-b");
  }

  private static Function<Map<String, Object>, Map<String, Object>> forPod(
      String name, UnaryOperator<Map<String, Object>> change) {
    return d ->
        name.equals(Fixtures.map(d, "metadata").get("name")) && "Pod".equals(d.get("kind"))
            ? change.apply(d)
            : d;
  }

  private static Map<String, Object> labelToAnnotation(Map<String, Object> pod) {
    Map<String, Object> meta = Fixtures.map(pod, "metadata");
    Object group = Fixtures.map(meta, "labels").remove("scheduling.x-k8s.io/pod-group");
    Fixtures.map(meta, "annotations").put("scheduling.x-k8s.io/pod-group", group);
    return pod;
  }

  /** The guide's ConfigMap with its "queueSort: disabled: PrioritySort" removed (the mistake). */
  private static Map<String, Object> withoutPrioritySortDisabled(Map<String, Object> cm) {
    Map<String, Object> data = Fixtures.map(cm, "data");
    String config = (String) data.get("config.yaml");
    String changed =
        config.replace("      queueSort:\n        disabled:\n          - name: PrioritySort\n", "");
    assertThat(changed).isNotEqualTo(config).doesNotContain("PrioritySort");
    data.put("config.yaml", changed);
    return cm;
  }

  private void status(String ns, String pod, String statusJson) {
    k8s.mutate(
        "pods",
        ns,
        pod,
        o -> {
          try {
            o.set("status", new com.fasterxml.jackson.databind.ObjectMapper().readTree(statusJson));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
          return o;
        });
  }

  private static String pendingOnLock(String node) {
    return "{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"SchedulerError\","
        + "\"message\":\"running Bind plugin \\\"DefaultBinder\\\": extender bind: node "
        + node
        + " has been locked within 5m0s\"}]}";
  }

  private static List<String> ids(DoctorReport r) {
    List<String> out = new ArrayList<>();
    for (Finding f : r.findings()) {
      out.add(f.checkId());
    }
    return out;
  }

  /**
   * The gang demo's healthy run: every member bound by hami-lock, served by the device plugin,
   * Running.
   */
  private void bindAllHealthy() {
    try (KubernetesHamiStack hami = Fixtures.hami(k8s)) {
      for (int i = 1; i <= 4; i++) {
        String node = i <= 2 ? "gpu-node-a" : "gpu-node-b";
        Fixtures.bind(hami, "default", "gang-worker-" + i, node);
        Fixtures.allocate(hami, node);
        k8s.mutate(
            "pods",
            "default",
            "gang-worker-" + i,
            o -> {
              o.withObjectProperty("status").put("phase", "Running");
              return o;
            });
      }
    }
  }

  // ------------------------------------------------------------------------------ gang

  @Test
  void gangOnTheGuidesManifestsShowsFourMembersBoundAndNoProblem() {
    guide(d -> d, d -> d);
    bindAllHealthy();
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).gang("default", "gang-training");
    GangEntry g = r.gang().orElseThrow();
    assertThat(g.found()).isTrue();
    assertThat(g.minMember()).isEqualTo(4);
    assertThat(g.memberCount()).isEqualTo(4);
    assertThat(g.members())
        .allSatisfy(
            m -> {
              assertThat(m.via()).isEqualTo("label");
              assertThat(m.phase()).isEqualTo("Running");
              assertThat(m.bindPhase()).isEqualTo("success");
              assertThat(m.node()).startsWith("gpu-node-");
            });
    assertThat(g.schedulerAccount()).isEqualTo("system:serviceaccount:hami-system:hami-scheduler");
    assertThat(r.findings()).isEmpty();
    assertThat(r.exitStatus()).isZero();

    Fixtures.Run json = Fixtures.run(k8s, Instant.now(), "--json", "gang", "default/gang-training");
    assertThat(json.exit()).isZero();
    com.google.gson.JsonObject gang =
        com.google.gson.JsonParser.parseString(json.out())
            .getAsJsonObject()
            .getAsJsonObject("gang");
    assertThat(gang.get("minMember").getAsInt()).isEqualTo(4);
    assertThat(gang.get("members").getAsInt()).isEqualTo(4);
    assertThat(gang.getAsJsonArray("pods")).hasSize(4);
    assertThat(gang.getAsJsonArray("pods").get(0).getAsJsonObject().get("foundBy").getAsString())
        .isEqualTo("label");
    Fixtures.Run table = Fixtures.run(k8s, Instant.now(), "gang", "default/gang-training");
    assertThat(table.out())
        .contains(
            "PodGroup default/gang-training: minMember 4, 4 member(s) created",
            "may get/list/watch podgroups: unknown",
            "gang-worker-1",
            "Running",
            "success");
    Fixtures.Run usage = Fixtures.run(k8s, Instant.now(), "gang", "gang-training");
    assertThat(usage.exit()).isEqualTo(2);
    assertThat(usage.err()).contains("gang needs NAMESPACE/PODGROUP", "usage:");
  }

  @Test
  void gangWithTheLabelUnderAnnotationsFindsThePodByItsAnnotationAndSaysPf05() {
    guide(forPod("gang-worker-4", GangAndDiagnoseTest::labelToAnnotation), d -> d);
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).gang("default", "gang-training");
    GangEntry g = r.gang().orElseThrow();
    assertThat(g.memberCount()).isEqualTo(3);
    assertThat(g.members())
        .filteredOn(m -> m.name().equals("gang-worker-4"))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.via()).isEqualTo("annotation");
              assertThat(m.isMember()).isFalse();
            });
    assertThat(ids(r)).contains("PF05", "PF06");
    assertThat(r.exitStatus()).isEqualTo(1);
    String table = ReportWriter.table(r);
    assertThat(table).contains("annotation(!)", "minMember 4, 3 member(s) created");
  }

  @Test
  void gangWithFewerPodsThanMinMemberSaysPf06AndShowsLockWaits() {
    guide(d -> "gang-worker-4".equals(Fixtures.map(d, "metadata").get("name")) ? null : d, d -> d);
    try (KubernetesHamiStack hami = Fixtures.hami(k8s)) {
      Fixtures.bind(
          hami, "default", "gang-worker-1", "gpu-node-a"); // plugin not yet served: lock held
    }
    status("default", "gang-worker-2", pendingOnLock("gpu-node-a"));
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).gang("default", "gang-training");
    assertThat(r.findings("PF06"))
        .singleElement()
        .satisfies(f -> assertThat(f.severity()).isEqualTo(Severity.ERROR));
    GangEntry g = r.gang().orElseThrow();
    assertThat(g.members())
        .filteredOn(m -> m.name().equals("gang-worker-1"))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.lock()).startsWith("holds lock hami.io/mutex.lock on node gpu-node-a");
              assertThat(m.bindPhase()).isEqualTo("allocating");
            });
    assertThat(g.members())
        .filteredOn(m -> m.name().equals("gang-worker-2"))
        .singleElement()
        .satisfies(
            m ->
                assertThat(m.lock())
                    .contains("bind failed on a held node lock", "gpu-node-a has been locked"));
    assertThat(ids(r)).contains("DR01");
  }

  @Test
  void gangWithoutItsPodGroupOrWithAWrongSchedulerOrMuslImageSaysSo() {
    guide(
        d ->
            "PodGroup".equals(d.get("kind"))
                ? null
                : forPod(
                        "gang-worker-1",
                        p -> {
                          Fixtures.map(p, "spec").put("schedulerName", "default-scheduler");
                          return p;
                        })
                    .andThen(
                        forPod(
                            "gang-worker-2",
                            p -> {
                              @SuppressWarnings("unchecked")
                              Map<String, Object> c =
                                  ((List<Map<String, Object>>)
                                          Fixtures.map(p, "spec").get("containers"))
                                      .get(0);
                              c.put("image", "alpine:3.20");
                              return p;
                            }))
                    .apply(d),
        d -> d);
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).gang("default", "gang-training");
    assertThat(r.gang().orElseThrow().found()).isFalse();
    assertThat(r.findings("PF08")).hasSize(1);
    assertThat(ids(r)).contains("PF07", "PF09");
  }

  @Test
  void gangWithTheQueueSortConflictInTheLiveConfigSaysPf01() {
    guide(d -> d, GangAndDiagnoseTest::withoutPrioritySortDisabled);
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).gang("default", "gang-training");
    assertThat(r.findings("PF01"))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.location().source()).isEqualTo("ConfigMap hami-system/hami-scheduler");
            });
  }

  // -------------------------------------------------------------------------- diagnose

  @Test
  void diagnoseFindsNothingOnAHealthyRunOfTheGangDemo() {
    guide(d -> d, d -> d);
    bindAllHealthy();
    Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "diagnose");
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).diagnose();
    assertThat(r.findings()).as(run.out()).isEmpty();
    assertThat(r.unreadable()).isEmpty();
    assertThat(run.exit()).isZero();
    assertThat(run.out()).contains("diagnose: 0 errors, 0 warnings, 0 info.");
  }

  @Test
  void symptom1BindingFailedOnALockedNodeWithTheLabelUnderAnnotations() {
    guide(forPod("gang-worker-4", GangAndDiagnoseTest::labelToAnnotation), d -> d);
    status("default", "gang-worker-4", pendingOnLock("gpu-node-b"));
    status("default", "gang-worker-3", pendingOnLock("gpu-node-b"));
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).diagnose();
    assertThat(r.findings(Doctor.DR01)).hasSize(2);
    assertThat(r.findings(Doctor.DR01))
        .filteredOn(f -> f.location().source().equals("Pod default/gang-worker-4"))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.message())
                  .contains(
                      "gpu-node-b has been locked within 5m0s",
                      "under metadata.annotations",
                      "PF05");
              assertThat(f.fix()).contains("move scheduling.x-k8s.io/pod-group to metadata.labels");
            });
    assertThat(r.findings(Doctor.DR01))
        .filteredOn(f -> f.location().source().equals("Pod default/gang-worker-3"))
        .singleElement()
        .satisfies(f -> assertThat(f.message()).contains("retry timeout (28s default)"));
    assertThat(ids(r)).contains("PF05");
  }

  @Test
  void symptom1RetryTimeoutNotBelowTheLiveHttpTimeoutIsPf03() {
    guide(
        d -> d,
        cm -> {
          Map<String, Object> data = Fixtures.map(cm, "data");
          data.put(
              "config.yaml",
              ((String) data.get("config.yaml")).replace("httpTimeout: 30s", "httpTimeout: 10s"));
          return cm;
        });
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).diagnose();
    assertThat(r.findings("PF03"))
        .anySatisfy(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.location().source()).isEqualTo("ConfigMap hami-system/hami-scheduler");
            });
  }

  @Test
  void symptom2SchedulerCrashLoopsOnTwoQueueSortPlugins() {
    guide(d -> d, GangAndDiagnoseTest::withoutPrioritySortDisabled);
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            Map.of("name", "hami-scheduler-7d9f8", "namespace", "hami-system"),
            "spec",
            Map.of(
                "containers",
                List.of(
                    Map.of(
                        "name",
                        "kube-scheduler",
                        "image",
                        "registry.k8s.io/kube-scheduler:v1.31.0")))));
    status(
        "hami-system",
        "hami-scheduler-7d9f8",
        "{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"kube-scheduler\","
            + "\"restartCount\":5,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":\"back-off 2m40s restarting failed container\"}},"
            + "\"lastState\":{\"terminated\":{\"reason\":\"Error\",\"exitCode\":1,\"message\":\"couldn't create scheduler: initializing"
            + " profiles: creating profile for scheduler name hami-scheduler: only one queue sort plugin required for profile with"
            + " scheduler name \\\"hami-scheduler\\\", but got 2\"}}}]}");
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).diagnose();
    assertThat(r.findings(Doctor.DR02))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.location().source()).isEqualTo("Pod hami-system/hami-scheduler-7d9f8");
              assertThat(f.message()).contains("only one queue sort plugin required");
              assertThat(f.fix()).contains("PrioritySort", "PF01");
            });
    assertThat(r.findings("PF01")).isNotEmpty();
  }

  @Test
  void symptom3GangBelowQuorumStaysPending() {
    guide(d -> "gang-worker-4".equals(Fixtures.map(d, "metadata").get("name")) ? null : d, d -> d);
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).diagnose();
    assertThat(r.findings(Doctor.DR03))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.location().source()).isEqualTo("PodGroup default/gang-training");
              assertThat(f.message()).contains("3 of 3 member(s)", "minMember 4", "PF06");
            });
    assertThat(r.findings("PF06")).isNotEmpty();
    assertThat(r.exitStatus()).isEqualTo(1);
  }

  @Test
  void symptom4MuslImageFailsWithLibdl() {
    guide(
        forPod(
            "gang-worker-1",
            p -> {
              @SuppressWarnings("unchecked")
              Map<String, Object> c =
                  ((List<Map<String, Object>>) Fixtures.map(p, "spec").get("containers")).get(0);
              c.put("image", "python:3.12-alpine3.19");
              return p;
            }),
        d -> d);
    status(
        "default",
        "gang-worker-1",
        "{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"worker\",\"restartCount\":3,"
            + "\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":\"back-off\"}},\"lastState\":{\"terminated\":{"
            + "\"reason\":\"Error\",\"exitCode\":127,\"message\":\"Error relocating /usr/local/vgpu/libvgpu.so: libdl.so.2: cannot open"
            + " shared object file: No such file or directory\"}}}]}");
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).diagnose();
    assertThat(r.findings(Doctor.DR04))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.location().source()).isEqualTo("Pod default/gang-worker-1");
              assertThat(f.fix()).contains("glibc", "PF09");
            });
    assertThat(r.findings("PF09")).isNotEmpty();
  }

  @Test
  void diagnoseReportsStuckLocksAndNamesTheirNodeInBindingFailures() {
    guide(d -> d, d -> d);
    try (KubernetesHamiStack hami = Fixtures.hami(k8s)) {
      Fixtures.bind(hami, "default", "gang-worker-1", "gpu-node-a"); // stalled plugin
    }
    status("default", "gang-worker-2", pendingOnLock("gpu-node-a"));
    DoctorReport r = Fixtures.doctor(k8s, Instant.now().plusSeconds(400)).diagnose();
    assertThat(r.findings(Doctor.DR05))
        .singleElement()
        .satisfies(f -> assertThat(f.checkName()).isEqualTo("node-lock-stuck-allocating"));
    assertThat(r.findings(Doctor.DR01))
        .singleElement()
        .satisfies(
            f -> assertThat(f.message()).contains("node gpu-node-a lock is stuck-allocating"));
  }

  // ---------------------------------------------------------------------- permissions

  @Test
  void aMissingPermissionIsExit2WithWhatAndWhyAndNoStackTrace() {
    guide(d -> d, d -> d);
    k8s.addFault(
        FaultRule.matching()
            .verb("list")
            .resource("podgroups")
            .respondStatus(
                403,
                "Forbidden",
                "podgroups.scheduling.x-k8s.io is forbidden: User \"doctor\" cannot list resource \"podgroups\" in API group"
                    + " \"scheduling.x-k8s.io\" at the cluster scope"));
    Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "diagnose");
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err())
        .contains(
            "cannot list podgroups.scheduling.x-k8s.io in all namespaces: HTTP 403 Forbidden:"
                + " podgroups.scheduling.x-k8s.io is forbidden: User \"doctor\"",
            "the doctor needs get/list on podgroups.scheduling.x-k8s.io cluster-wide");
    assertThat(run.err() + run.out()).doesNotContain("Exception", "\tat ");
    // the rest of the diagnosis is still shown, and the failed read is named once
    assertThat(run.out()).contains("1 read(s) failed");
    assertThat(occurrences(run.out() + run.err(), "cannot list podgroups")).isEqualTo(1);
  }

  @Test
  void withNoClusterDiagnoseSaysTheConfigMapsCouldNotBeReadAndNamesEachFailedReadOnce() {
    Fixtures.Run run = runWithoutCluster("diagnose");
    assertThat(run.exit()).isEqualTo(2);
    String all = run.out() + run.err();
    assertThat(all)
        .doesNotContain("no ConfigMap with a KubeSchedulerConfiguration found")
        .contains("ConfigMaps could not be read");
    assertThat(occurrences(all, "cannot list configmaps in all namespaces: no answer from the API"))
        .isEqualTo(1);
    assertThat(occurrences(all, "cannot list nodes")).isEqualTo(1);
  }

  private static int occurrences(String text, String part) {
    return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
  }

  @Test
  void anUnreachableServerIsExit2() {
    Fixtures.Run run = runWithoutCluster("locks");
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err()).contains("cannot list nodes: no answer from the API server");
    assertThat(run.out())
        .as("no table header over nodes that could not be read, only the summary")
        .doesNotContain("NODE", "LOCK KEY")
        .startsWith("locks: ");
  }

  /** Runs the command with a kubeconfig naming this test's emulator after it is stopped. */
  private Fixtures.Run runWithoutCluster(String command) {
    java.nio.file.Path kubeconfig;
    try {
      kubeconfig = java.nio.file.Files.createTempFile("doctor-unreachable", ".kubeconfig");
      java.nio.file.Files.copy(
          k8s.kubeconfigFile(), kubeconfig, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    kubeconfig.toFile().deleteOnExit();
    k8s.close();
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int exit =
        DoctorCommand.run(
            List.of("--kubeconfig", kubeconfig.toString(), command),
            new java.io.PrintStream(out),
            new java.io.PrintStream(err),
            DoctorCommand::client,
            b -> b);
    return new Fixtures.Run(exit, out.toString(), err.toString());
  }

  @Test
  void unlockRefusesWhenTheLockChangesBetweenItsReadAndItsRelease() {
    // between the doctor's GET and its compare-and-delete PATCH, another bind takes the node
    assertUnlockOfFirstRefusedWhenRacedBy("2026-11-30T12:00:05Z,default,second", "default/second");
  }

  @Test
  void unlockWithoutForceRemovesALockReStampedByItsLiveHolderAfterTheJudgedRead() {
    // issue 23: the doctor judged the value it read (expired: no --force needed), but its release
    // fell back to deleting whatever value the same holder wrote since, here the binder's re-stamp
    // in StoreNodeLock.stillHeld right before its Binding: a held lock, never judged, was removed
    // without --force (exit 0)
    assertUnlockOfFirstRefusedWhenRacedBy("2026-11-30T12:05:05Z,default,first", "default/first");
  }

  /**
   * {@code unlock gpu-node-a --holder default/first} of {@code first}'s expired lock, with {@code
   * raced} written between the doctor's read and its release: refused, {@code raced} left.
   */
  private void assertUnlockOfFirstRefusedWhenRacedBy(String raced, String racedOwner) {
    Fixtures.gpuNode(k8s, "gpu-node-a");
    k8s.createPod("default", "first", Map.of());
    k8s.createPod("default", "second", Map.of());
    k8s.mutate(
        "nodes",
        null,
        "gpu-node-a",
        o -> {
          o.withObjectProperty("metadata")
              .withObjectProperty("annotations")
              .put(Fixtures.LOCK, "2026-11-30T12:00:00Z,default,first");
          return o;
        });
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1)
            .invoke(
                req ->
                    k8s.mutate(
                        "nodes",
                        null,
                        "gpu-node-a",
                        o -> {
                          o.withObjectProperty("metadata")
                              .withObjectProperty("annotations")
                              .put(Fixtures.LOCK, raced);
                          return o;
                        })));
    Fixtures.Run run =
        Fixtures.run(
            k8s,
            Instant.parse("2026-11-30T12:05:06Z"), // first's lock expired: no --force needed
            "unlock",
            "gpu-node-a",
            "--holder",
            "default/first");
    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out())
        .contains(
            "changed between read and release",
            "now \"" + raced + "\" (" + racedOwner + ")",
            "refused, nothing changed");
    assertThat(Fixtures.lockOn(k8s, "gpu-node-a")).contains(raced);
  }
}
