package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Guide symptom 1 with its live evidence: on kube-apiserver the BindingFailed event and the
 * scheduler Deployment's {@code --node-lock-retry-timeout=0} (retry disabled) are read from the
 * API; on the emulator, which serves neither Events nor Deployments, the evidence is the pod's
 * PodScheduled condition, the retry timeout is HAMi's default, and the notes say what was not read.
 */
class DiagnoseOnBackendsTest {

  private static int post(ApiClient admin, String path, Object body) throws ApiException {
    var call =
        admin.buildCall(
            null,
            path,
            "POST",
            new ArrayList<Pair>(),
            new ArrayList<Pair>(),
            body,
            new HashMap<>(Map.of("Content-Type", "application/json", "Accept", "application/json")),
            new HashMap<>(),
            new HashMap<>(),
            new String[] {"BearerToken"},
            null);
    try {
      return admin.execute(call, Object.class).getStatusCode();
    } catch (ApiException e) {
      if (e.getCode() == 409) {
        return 409; // created by an earlier test on the shared server
      }
      throw e;
    }
  }

  @BackendTest
  void bindingFailedOnALockWithRetryDisabledInTheLiveSchedulerDeployment(KubeBackend k8s)
      throws Exception {
    if (k8s.get("namespaces", null, "hami-system").isEmpty()) {
      k8s.createNamespace("hami-system");
    }
    if (k8s.get("configmaps", "hami-system", "hami-scheduler").isEmpty()) {
      Fixtures.applyGuide(k8s, "scheduler-config.yaml", d -> d);
    }
    String pod = Fixtures.unique("member");
    String node = Fixtures.unique("busy-node");
    Fixtures.gpuPod(
        k8s,
        "default",
        pod,
        Map.of("scheduling.x-k8s.io/pod-group", "g-" + pod),
        Map.of(),
        "ubuntu:22.04");
    String message =
        "running Bind plugin \"DefaultBinder\": extender bind: node "
            + node
            + " has been locked within 5m0s";
    if (k8s.kind() == KubeBackend.Kind.REAL) {
      ApiClient admin = k8s.newApiClient(Duration.ofSeconds(10));
      assertThat(
              post(
                  admin,
                  "/apis/apps/v1/namespaces/hami-system/deployments",
                  Map.of(
                      "apiVersion",
                      "apps/v1",
                      "kind",
                      "Deployment",
                      "metadata",
                      Map.of("name", "hami-scheduler", "namespace", "hami-system"),
                      "spec",
                      Map.of(
                          "selector",
                          Map.of("matchLabels", Map.of("app", "hami-scheduler")),
                          "template",
                          Map.of(
                              "metadata",
                              Map.of("labels", Map.of("app", "hami-scheduler")),
                              "spec",
                              Map.of(
                                  "serviceAccountName",
                                  "hami-scheduler",
                                  "containers",
                                  List.of(
                                      Map.of(
                                          "name",
                                          "kube-scheduler",
                                          "image",
                                          "registry.k8s.io/kube-scheduler:v1.31.0",
                                          "command",
                                          List.of(
                                              "kube-scheduler", "--config=/config/config.yaml")),
                                      Map.of(
                                          "name",
                                          "vgpu-scheduler-extender",
                                          "image",
                                          "projecthami/hami:v2.5.0",
                                          "command",
                                          List.of(
                                              "scheduler",
                                              "--http_bind=0.0.0.0:443",
                                              "--node-lock-retry-timeout=0")))))))))
          .isIn(201, 409);
      assertThat(
              post(
                  admin,
                  "/api/v1/namespaces/default/events",
                  Map.of(
                      "apiVersion",
                      "v1",
                      "kind",
                      "Event",
                      "metadata",
                      Map.of("name", pod + ".bindfailed", "namespace", "default"),
                      "involvedObject",
                      Map.of(
                          "kind", "Pod", "namespace", "default", "name", pod, "apiVersion", "v1"),
                      "reason",
                      "FailedScheduling",
                      "type",
                      "Warning",
                      "message",
                      message,
                      "firstTimestamp",
                      Instant.now().toString(),
                      "lastTimestamp",
                      Instant.now().toString(),
                      "source",
                      Map.of("component", "hami-scheduler"))))
          .isEqualTo(201);
    } else {
      k8s.mutate(
          "pods",
          "default",
          pod,
          o -> {
            ObjectNode c = o.withObjectProperty("status").putArray("conditions").addObject();
            c.put("type", "PodScheduled")
                .put("status", "False")
                .put("reason", "SchedulerError")
                .put("message", message);
            return o;
          });
    }
    DoctorReport r = Fixtures.doctor(k8s, Instant.now()).diagnose();
    assertThat(r.unreadable()).isEmpty();
    assertThat(r.findings(Doctor.DR01))
        .filteredOn(f -> f.location().source().equals("Pod default/" + pod))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.message()).contains(node + " has been locked within 5m0s");
              if (k8s.kind() == KubeBackend.Kind.REAL) {
                assertThat(f.message())
                    .contains(
                        "event FailedScheduling",
                        "--node-lock-retry-timeout is 0",
                        "retry disabled");
                assertThat(f.fix()).contains("--node-lock-retry-timeout=28s");
              } else {
                assertThat(f.message())
                    .contains("PodScheduled SchedulerError", "retry timeout (28s default)");
              }
            });
    if (k8s.kind() == KubeBackend.Kind.REAL) {
      assertThat(r.findings("PF03"))
          .anySatisfy(f -> assertThat(f.severity()).isEqualTo(Severity.INFO));
    } else {
      assertThat(r.notes())
          .anySatisfy(n -> assertThat(n).startsWith("events ").contains("not served"));
      assertThat(r.notes())
          .anySatisfy(n -> assertThat(n).startsWith("deployments ").contains("not served"));
    }
  }
}
