package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.extender.ExtenderConfig;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.RealApiServer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.util.Yaml;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import okhttp3.Interceptor;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * deploy/10-rbac.yaml on a real kube-apiserver + etcd (testing/realcluster): the extender runs the
 * guide's gang as the ServiceAccount {@code hami-system/hami-scheduler} (impersonated by the admin
 * client: every request of the extender, its informers and lock watches carries {@code
 * Impersonate-User: system:serviceaccount:hami-system:hami-scheduler}) and gets no 403; with {@code
 * pods/binding create} removed from the ClusterRole the bind fails naming the missing permission.
 * The Filter's informers of ResourceSlices and ResourceClaims sync under the same role. Run: {@code
 * mvn -B -pl examples/extender -am verify -Preal-apiserver -Dtest=RbacRealApiServerTest
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Tag("real-apiserver")
class RbacRealApiServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SA_USER = "system:serviceaccount:hami-system:hami-scheduler";
  private static final String NODE = "node-a";

  /** Every request but watches the extender's clients sent, in order (1 test at a time here). */
  private static final List<String> SENT = new CopyOnWriteArrayList<>();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /**
   * A copy of the admin client whose every request impersonates the ServiceAccount; 403s recorded.
   */
  private static ApiClient asServiceAccount(
      RealApiServer k8s, Duration readTimeout, List<String> forbidden) {
    ApiClient c = k8s.newApiClient(readTimeout);
    Interceptor impersonate =
        chain -> {
          okhttp3.Response r =
              chain.proceed(
                  chain.request().newBuilder().header("Impersonate-User", SA_USER).build());
          String request = chain.request().method() + " " + chain.request().url().encodedPath();
          if (r.code() == 403) {
            forbidden.add(request);
          }
          if (!"true".equals(chain.request().url().queryParameter("watch"))) {
            SENT.add(request);
          }
          return r;
        };
    c.setHttpClient(c.getHttpClient().newBuilder().addInterceptor(impersonate).build());
    return c;
  }

  private static void applyRbac(ApiClient admin, UnaryOperator<List<V1PolicyRule>> edit)
      throws Exception {
    CoreV1Api core = new CoreV1Api(admin);
    RbacAuthorizationV1Api rbac = new RbacAuthorizationV1Api(admin);
    for (Object doc :
        Yaml.loadAll(
            Files.readString(DeployManifestsTest.DEPLOY.resolve("00-namespace.yaml"))
                + "\n---\n"
                + Files.readString(DeployManifestsTest.DEPLOY.resolve("10-rbac.yaml")))) {
      if (doc instanceof V1Namespace ns) {
        core.createNamespace(ns).execute();
      } else if (doc instanceof V1ServiceAccount sa) {
        core.createNamespacedServiceAccount(sa.getMetadata().getNamespace(), sa).execute();
      } else if (doc instanceof V1ClusterRole role
          && role.getMetadata().getName().equals("hami-extender")) {
        role.setRules(edit.apply(new ArrayList<>(role.getRules())));
        rbac.createClusterRole(role).execute();
      } else if (doc instanceof V1ClusterRoleBinding b
          && b.getMetadata().getName().equals("hami-extender")) {
        rbac.createClusterRoleBinding(b).execute();
      }
      // kube-scheduler's own bindings are not applied: the extender must do with its role alone
    }
  }

  /**
   * RBAC objects reach the API server's authorizer cache after a moment: wait until the role is in
   * effect.
   */
  private static void awaitRbac(RealApiServer k8s) throws Exception {
    CoreV1Api asSa =
        new CoreV1Api(asServiceAccount(k8s, Duration.ofSeconds(10), new ArrayList<>()));
    long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      try {
        asSa.listNode().execute();
        return;
      } catch (io.kubernetes.client.openapi.ApiException e) {
        if (e.getCode() != 403 || System.nanoTime() > until) {
          throw e;
        }
        Thread.sleep(50);
      }
    }
  }

  private static String fixture(String name) throws Exception {
    try (InputStream in = RbacRealApiServerTest.class.getResourceAsStream("/fixtures/" + name)) {
      return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static List<String> seed(RealApiServer k8s) throws Exception {
    List<String> pods = new ArrayList<>();
    org.yaml.snakeyaml.Yaml yaml =
        new org.yaml.snakeyaml.Yaml(new SafeConstructor(new LoaderOptions()));
    for (String f : List.of("nodes.yaml", "gang-training.yaml")) {
      for (Object doc : yaml.loadAll(fixture(f))) {
        if (doc instanceof Map<?, ?> m
            && ("Node".equals(m.get("kind")) || "Pod".equals(m.get("kind")))) {
          k8s.create(m);
          if ("Pod".equals(m.get("kind"))) {
            pods.add((String) ((Map<?, ?>) m.get("metadata")).get("name"));
          }
        }
      }
    }
    return pods;
  }

  private HttpResponse<String> post(String url, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(40))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String filterArgs(RealApiServer k8s, String pod) throws Exception {
    ObjectNode args = (ObjectNode) JSON.readTree(fixture("F-81-filter-args-null-pod.json"));
    args.set("Pod", k8s.get("pods", "default", pod).orElseThrow());
    args.putArray("NodeNames").add("node-a").add("node-b");
    return JSON.writeValueAsString(args);
  }

  private static String bindArgs(RealApiServer k8s, String pod) throws Exception {
    ObjectNode args = (ObjectNode) JSON.readTree(fixture("F-82-binding-args.json"));
    args.put("PodName", pod)
        .put("PodNamespace", "default")
        .put("PodUID", k8s.get("pods", "default", pod).orElseThrow().at("/metadata/uid").asText())
        .put("Node", NODE);
    return JSON.writeValueAsString(args);
  }

  private RunningExtender start(RealApiServer k8s, List<String> forbidden) throws Exception {
    ExtenderConfig config =
        ExtenderConfig.builder()
            .port(0)
            .schedulerFlags(HamiSchedulerFlags.builder().environment(Map.of()).build())
            .build();
    RunningExtender ext =
        RunningExtender.start(
            config,
            asServiceAccount(k8s, Duration.ofSeconds(10), forbidden),
            asServiceAccount(k8s, Duration.ZERO, forbidden),
            VendorRegistry.discover(),
            false);
    long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!ext.ready() && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertThat(ext.ready())
        .as("informers and lock watch synced as the ServiceAccount; 403s: " + forbidden)
        .isTrue();
    return ext;
  }

  @Test
  void theGangRunsAsTheServiceAccountWithNoForbiddenAnswer() throws Exception {
    try (RealApiServer k8s = RealApiServer.start()) {
      applyRbac(k8s.apiClient(), UnaryOperator.identity());
      awaitRbac(k8s);
      List<String> members = seed(k8s);
      List<String> forbidden = new CopyOnWriteArrayList<>();
      try (RunningExtender ext = start(k8s, forbidden);
          KubernetesHamiStack plugin =
              KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                  .watch(false)
                  .build()) {
        // kube-apiserver v1.37 serves resource.k8s.io/v1: the Filter's DRA informers (list and
        // watch, as the ServiceAccount) sync, and the Filter lists no DRA object per request
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!ext.draWatched() && System.nanoTime() < until) {
          Thread.sleep(20);
        }
        assertThat(ext.draWatched()).as("DRA informers synced; 403s: " + forbidden).isTrue();
        String base = "http://127.0.0.1:" + ext.port();
        for (String m : members) {
          String args = filterArgs(k8s, m);
          SENT.clear();
          HttpResponse<String> f = post(base + "/filter", args);
          assertThat(f.body()).as(m).isEqualTo(fixture("F-82-filter-result-success.json"));
          // issue 25: the pod and the DRA objects from the informers, one request per /filter
          assertThat(SENT)
              .as("requests of one /filter")
              .containsExactly("PATCH /api/v1/namespaces/default/pods/" + m);
          String bind = bindArgs(k8s, m);
          SENT.clear();
          HttpResponse<String> b = post(base + "/bind", bind);
          assertThat(b.body()).as(m).isEqualTo(fixture("F-82-binding-result-ok.json"));
          System.out.println("requests of /bind " + m + ": " + SENT);
          JsonNode pod = k8s.get("pods", "default", m).orElseThrow();
          assertThat(pod.at("/spec/nodeName").asText()).isEqualTo(NODE);
          HandoffResult h = plugin.devicePluginHandoff("NVIDIA").allocateAll(NODE);
          assertThat(h.lockReleased()).as(m).isTrue();
        }
      }
      System.out.println(
          "RBAC proof: "
              + members.size()
              + " gang members bound as "
              + SA_USER
              + "; 403 answers: "
              + forbidden.size()
              + " "
              + forbidden);
      assertThat(forbidden).as("forbidden answers").isEmpty();
    }
  }

  @Test
  void withoutPodsBindingCreateTheBindFailsNamingTheMissingPermission() throws Exception {
    try (RealApiServer k8s = RealApiServer.start()) {
      applyRbac(
          k8s.apiClient(),
          rules -> {
            rules.removeIf(r -> r.getResources().contains("pods/binding"));
            return rules;
          });
      awaitRbac(k8s);
      List<String> members = seed(k8s);
      List<String> forbidden = new CopyOnWriteArrayList<>();
      try (RunningExtender ext = start(k8s, forbidden)) {
        String base = "http://127.0.0.1:" + ext.port();
        String m = members.get(0);
        assertThat(post(base + "/filter", filterArgs(k8s, m)).body())
            .isEqualTo(fixture("F-82-filter-result-success.json"));
        HttpResponse<String> b = post(base + "/bind", bindArgs(k8s, m));
        System.out.println(
            "RBAC proof, pods/binding create removed: HTTP "
                + b.statusCode()
                + " "
                + b.body()
                + "; 403 answers: "
                + forbidden);
        String error = JSON.readTree(b.body()).path("Error").asText();
        assertThat(error)
            .contains("forbidden")
            .contains("cannot create resource")
            .contains("pods/binding")
            .contains(SA_USER);
        assertThat(forbidden).singleElement().asString().contains("/binding");
        assertThat(k8s.get("pods", "default", m).orElseThrow().at("/spec/nodeName").asText())
            .isEmpty();
      }
    }
  }
}
