package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.ApiResponse;
import io.kubernetes.client.openapi.Pair;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.Yaml;

/**
 * The documented ClusterRoles ({@code rbac/hami-lock-doctor-rbac.yaml}) are enough, and a missing
 * permission degrades to exit 2 with what could not be read and the permission to grant, never a
 * stack trace. On kube-apiserver: users impersonated with and without the roles bound. On the
 * emulator (no RBAC): the same refusals injected as 403 answers.
 */
class RbacOnBackendsTest {

  private static ApiClient as(KubeBackend k8s, String user) {
    ApiClient c = k8s.newApiClient(Duration.ofSeconds(10));
    c.addDefaultHeader("Impersonate-User", user);
    return c;
  }

  private static Fixtures.Run run(ApiClient client, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        DoctorCommand.run(
            List.of(args),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            k -> client,
            b -> b.clock(InstantSource.fixed(Instant.now())).lockTimeout(Duration.ofMinutes(5)));
    return new Fixtures.Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** POSTs a JSON object (RBAC objects: the backends' seeding covers only core kinds). */
  private static void post(ApiClient admin, String path, Object body) throws ApiException {
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
    ApiResponse<Object> r = admin.execute(call, Object.class);
    assertThat(r.getStatusCode()).isIn(200, 201);
  }

  @SuppressWarnings("unchecked")
  private static void applyRbac(KubeBackend k8s, String suffix) throws IOException, ApiException {
    ApiClient admin = k8s.newApiClient(Duration.ofSeconds(10));
    try (InputStream in = Files.newInputStream(Path.of("rbac/hami-lock-doctor-rbac.yaml"))) {
      for (Object doc : new Yaml().loadAll(in)) {
        Map<String, Object> role = (Map<String, Object>) doc;
        String name = ((Map<String, Object>) role.get("metadata")).get("name") + suffix;
        ((Map<String, Object>) role.get("metadata")).put("name", name);
        post(admin, "/apis/rbac.authorization.k8s.io/v1/clusterroles", role);
      }
    }
  }

  @BackendTest
  void theReadOnlyRoleIsEnoughForLocksAndNotForUnlockAndNoRoleIsExit2(KubeBackend k8s)
      throws Exception {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("rbac"));
    String pod = Fixtures.unique("worker");
    Fixtures.gpuPod(k8s, "default", pod, Map.of(), Map.of(), "ubuntu:22.04");
    try (KubernetesHamiStack hami = Fixtures.hami(k8s)) {
      Fixtures.bind(hami, "default", pod, node);
    }
    ApiClient reader;
    ApiClient nobody;
    if (k8s.kind() == KubeBackend.Kind.REAL) {
      String suffix = "-" + Fixtures.unique("t");
      String user = "doctor-reader" + suffix;
      applyRbac(
          k8s, suffix); // both documented roles; the reader is bound to the read-only one only
      reader = as(k8s, user);
      post(
          k8s.newApiClient(Duration.ofSeconds(10)),
          "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
          Map.of(
              "apiVersion",
              "rbac.authorization.k8s.io/v1",
              "kind",
              "ClusterRoleBinding",
              "metadata",
              Map.of("name", "reader" + suffix),
              "roleRef",
              Map.of(
                  "apiGroup",
                  "rbac.authorization.k8s.io",
                  "kind",
                  "ClusterRole",
                  "name",
                  "hami-lock-doctor" + suffix),
              "subjects",
              List.of(
                  Map.of("apiGroup", "rbac.authorization.k8s.io", "kind", "User", "name", user))));
      nobody = as(k8s, "doctor-nobody" + suffix);
    } else {
      ApiServerEmulator emu = (ApiServerEmulator) k8s;
      reader = k8s.newApiClient(Duration.ofSeconds(10));
      nobody = reader;
      emu.addFault(
          FaultRule.matching()
              .verb("patch")
              .resource("nodes")
              .times(1)
              .respondStatus(
                  403,
                  "Forbidden",
                  "nodes \""
                      + node
                      + "\" is forbidden: User \"doctor-reader\" cannot patch resource \"nodes\" in API group \"\" at the cluster scope"));
    }
    // read-only role: locks works (RBAC is re-read by the apiserver at once; no wait needed for a
    // new binding)
    Fixtures.Run locks = run(reader, "locks");
    // (other tests' nodes on the shared real server may hold malformed locks: exit 1 is a finding,
    // not a read failure)
    assertThat(locks.exit()).as(locks.out() + locks.err()).isNotEqualTo(2);
    assertThat(locks.err()).isEmpty();
    assertThat(locks.out()).doesNotContain("could not read");
    assertThat(locks.out()).contains(node, "held", "default/" + pod);
    // unlock needs patch nodes: exit 2 naming it (--force: the holder is alive, the lock held)
    Fixtures.Run unlock = run(reader, "unlock", node, "--holder", "default/" + pod, "--force");
    assertThat(unlock.exit()).isEqualTo(2);
    assertThat(unlock.err())
        .contains(
            "cannot patch node " + node + " (release lock hami.io/mutex.lock): HTTP 403",
            "the doctor needs patch on nodes");
    assertThat(Fixtures.lockOn(k8s, node)).isPresent();
    // no role at all: exit 2 naming the first refused read
    if (k8s.kind() == KubeBackend.Kind.EMULATOR) {
      ((ApiServerEmulator) k8s)
          .addFault(
              FaultRule.matching()
                  .verb("list")
                  .resource("nodes")
                  .times(1)
                  .respondStatus(
                      403,
                      "Forbidden",
                      "nodes is forbidden: User \"doctor-nobody\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"));
    }
    Fixtures.Run none = run(nobody, "locks");
    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.err())
        .contains(
            "cannot list nodes: HTTP 403 Forbidden: nodes is forbidden: User \"doctor-nobody",
            "the doctor needs get/list on nodes cluster-wide");
    assertThat(none.err() + none.out()).doesNotContain("Exception", "\tat ");
  }

  @BackendTest
  void pf04ComesFromALiveAccessReviewOfTheSchedulersServiceAccount(KubeBackend k8s)
      throws Exception {
    if (k8s.get("namespaces", null, "hami-system").isEmpty()) {
      k8s.createNamespace("hami-system");
    }
    if (k8s.get("configmaps", "hami-system", "hami-scheduler").isEmpty()) {
      Fixtures.applyGuide(
          k8s, "scheduler-config.yaml", d -> d); // Coscheduling enabled: PodGroup RBAC matters
    }
    Doctor doctor = Fixtures.doctor(k8s, Instant.now());
    DoctorReport before = doctor.diagnose();
    if (k8s.kind() == KubeBackend.Kind.EMULATOR) {
      // the emulator has no authorizer: the review is reported as not made, never as allowed
      assertThat(before.notes())
          .anySatisfy(
              n ->
                  assertThat(n)
                      .contains(
                          "SubjectAccessReviews are not served",
                          "system:serviceaccount:hami-system:hami-scheduler"));
      assertThat(before.findings("PF04")).isEmpty();
      return;
    }
    assertThat(before.findings("PF04"))
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.message())
                  .contains(
                      "system:serviceaccount:hami-system:hami-scheduler may not get/list/watch"
                          + " podgroups.scheduling.x-k8s.io");
              assertThat(f.fix()).contains("hami-system/hami-scheduler");
            });
    // the guide's step 4, applied live
    ApiClient admin = k8s.newApiClient(Duration.ofSeconds(10));
    try (InputStream in =
        RbacOnBackendsTest.class.getResourceAsStream("/guide/rbac-podgroup-reader.yaml")) {
      for (Object doc : new Yaml().loadAll(in)) {
        @SuppressWarnings("unchecked")
        Map<String, Object> o = (Map<String, Object>) doc;
        post(
            admin,
            "/apis/rbac.authorization.k8s.io/v1/"
                + ("ClusterRole".equals(o.get("kind")) ? "clusterroles" : "clusterrolebindings"),
            o);
      }
    }
    DoctorReport after = doctor.diagnose();
    for (int i = 0;
        i < 50 && !after.findings("PF04").isEmpty();
        i++) { // the RBAC authorizer's cache catches up
      Thread.sleep(100);
      after = doctor.diagnose();
    }
    assertThat(after.findings("PF04")).isEmpty();
  }
}
