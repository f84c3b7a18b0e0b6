package dev.hamilock.testkit;

import static dev.hamilock.testkit.Fx.LOCK;
import static dev.hamilock.testkit.Fx.P;
import static dev.hamilock.testkit.Fx.typed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.gson.reflect.TypeToken;
import dev.hamilock.testkit.Fx.ApiCall;
import dev.hamilock.testkit.Fx.Outcome;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1Binding;
import io.kubernetes.client.openapi.models.V1DeleteOptions;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Preconditions;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import okhttp3.Call;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One row per operation of kube-api-notes §2's capability matrix (plus the neighbouring semantics
 * of §6), each asserting the "real kube-apiserver" column: HTTP status, Status reason and the
 * effect on the stored object, through the official client-java 27.0.0. Every row gets a fresh
 * emulator.
 */
class ConformanceTest {
  private static final String MERGE = V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH;
  private static final String JSONP = V1Patch.PATCH_FORMAT_JSON_PATCH;
  private static final String SMP = V1Patch.PATCH_FORMAT_STRATEGIC_MERGE_PATCH;

  interface Probe {
    Outcome run(Fx fx) throws Exception;
  }

  /**
   * One operation.
   *
   * @param operation the row's name in CONFORMANCE.md
   * @param code HTTP status on the emulator (and on the real server unless {@link #realCode})
   * @param reason Status reason ("" for none / not checked)
   * @param probe what the row does on a {@link Fx}
   * @param emulatorOnly null, or why the row cannot run on a real server (an emulator feature)
   * @param difference null, or why the real server's different answer cannot matter to hami-lock
   * @param realCode the real server's status if it differs (then {@link #difference} says why)
   * @param realReason the real server's Status reason if it differs
   * @param realServerArg null, or a kube-apiserver flag the row needs (it then runs on a second
   *     real server started with it), with why
   */
  record Row(
      String operation,
      int code,
      String reason,
      Probe probe,
      String emulatorOnly,
      String difference,
      int realCode,
      String realReason,
      String realServerArg) {
    @Override
    public String toString() {
      return operation;
    }

    Row emulatorOnly(String why) {
      return new Row(
          operation, code, reason, probe, why, difference, realCode, realReason, realServerArg);
    }

    /** A documented difference with the same status code and reason. */
    Row differs(String why) {
      return new Row(
          operation, code, reason, probe, emulatorOnly, why, realCode, realReason, realServerArg);
    }

    /** A documented difference in the status code and reason too. */
    Row differs(int onReal, String reasonOnReal, String why) {
      return new Row(
          operation, code, reason, probe, emulatorOnly, why, onReal, reasonOnReal, realServerArg);
    }

    /** Runs the real side on a second server started with {@code arg}. */
    Row onRealServerWith(String arg) {
      return new Row(
          operation, code, reason, probe, emulatorOnly, difference, realCode, realReason, arg);
    }

    int expectedCode(boolean real) {
      return real && realCode != 0 ? realCode : code;
    }

    String expectedReason(boolean real) {
      return real && realCode != 0 ? realReason : reason;
    }
  }

  /**
   * A Running pod labelled app=a, a budget selecting it with {@code disruptionsAllowed} as given
   * (the disruption controller's status, written by hand), then its eviction; with an allowance the
   * answer's body carries the budget's status afterwards. The budget is deleted again.
   */
  private static Outcome evictUnderBudget(Fx fx, int allowed) throws Exception {
    String pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
    fx.raw(
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/json",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
            + "\"labels\":{\"app\":\"a\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
            + "\"image\":\"busybox\"}]}}");
    fx.raw(
        "PATCH",
        "/api/v1/namespaces/default/pods/p1/status",
        "application/merge-patch+json",
        "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
            + "\"status\":\"True\"}]}}");
    fx.raw(
        "POST",
        pdbs,
        "application/json",
        "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
            + "{\"name\":\"pdb\"},\"spec\":{\"maxUnavailable\":1,\"selector\":"
            + "{\"matchLabels\":{\"app\":\"a\"}}}}");
    try {
      assertThat(
              fx.raw(
                      "PATCH",
                      pdbs + "/pdb/status",
                      "application/merge-patch+json",
                      "{\"status\":{\"observedGeneration\":1,\"disruptionsAllowed\":"
                          + allowed
                          + ",\"currentHealthy\":1,\"desiredHealthy\":1,\"expectedPods\":1}}")
                  .code())
          .isEqualTo(200);
      Outcome o =
          fx.raw(
              "POST",
              "/api/v1/namespaces/default/pods/p1/eviction",
              "application/json",
              "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
                  + "{\"name\":\"p1\"}}");
      if (o.code() != 201) {
        return o;
      }
      JsonNode status = fx.raw("GET", pdbs + "/pdb", null, null).body().path("status");
      assertThat(status.path("disruptionsAllowed").asInt()).isEqualTo(allowed - 1);
      assertThat(status.path("disruptedPods").has("p1")).isTrue();
      return new Outcome(o.code(), o.reason(), status.path("disruptedPods"));
    } finally {
      fx.raw("DELETE", pdbs + "/pdb", null, null);
    }
  }

  private static Row row(String op, int code, String reason, Probe p) {
    return new Row(op, code, reason, p, null, null, 0, null, null);
  }

  private static V1Node newNode(String name) {
    return new V1Node().metadata(new V1ObjectMeta().name(name));
  }

  private static void lockNode(Fx fx, String holder) {
    fx.k.createNode("node-a", holder == null ? Map.of("other", "x") : Map.of(LOCK, holder));
  }

  private static String jsonPatch(String... ops) {
    return "[" + String.join(",", ops) + "]";
  }

  private static String op(String op, String path, String valueJson) {
    return "{\"op\":\""
        + op
        + "\",\"path\":\""
        + path
        + "\""
        + (valueJson == null ? "" : ",\"value\":" + valueJson)
        + "}";
  }

  static Stream<Row> rows() {
    List<Row> rows = new ArrayList<>();
    // --- create / get / list
    rows.add(
        row(
            "POST create Node",
            201,
            "",
            fx -> {
              Outcome o = typed(201, () -> fx.api.createNode(newNode("node-a")).execute());
              JsonNode m = fx.node("node-a").path("metadata");
              assertThat(m.path("uid").asText()).isNotEmpty();
              assertThat(m.path("creationTimestamp").asText()).endsWith("Z");
              assertThat(Long.parseLong(m.path("resourceVersion").asText())).isPositive();
              return o;
            }));
    rows.add(
        row(
                "POST create Node: spec and status the server fills in",
                201,
                "",
                fx -> {
                  Outcome o =
                      fx.raw(
                          "POST",
                          "/api/v1/nodes",
                          "application/json",
                          "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\"}}");
                  fx.observe("spec", o.body().path("spec"));
                  fx.observe("status", o.body().path("status"));
                  return o;
                })
            .differs(
                "kube-apiserver's TaintNodesByCondition admission adds the node.kubernetes.io/not-ready:NoSchedule"
                    + " taint to a new Node (its kubelet would clear it) and the Node's status serialises empty"
                    + " daemonEndpoints and nodeInfo; the emulator stores the Node as sent. hami-lock reads nodes'"
                    + " annotations only (and never taints or status); the scheduler that would honour the taint is not part"
                    + " of these tests"));
    rows.add(
        row(
            "POST duplicate Node",
            409,
            "AlreadyExists",
            fx -> {
              fx.k.createNode("node-a", Map.of());
              Outcome o = typed(201, () -> fx.api.createNode(newNode("node-a")).execute());
              assertThat(o.body().path("message").asText())
                  .isEqualTo("nodes \"node-a\" already exists");
              assertThat(o.body().path("details").path("kind").asText()).isEqualTo("nodes");
              return o;
            }));
    rows.add(
        row(
            "GET Node",
            200,
            "",
            fx -> {
              fx.k.createNode("node-a", Map.of("a", "1"));
              Outcome o = typed(200, () -> fx.api.readNode("node-a").execute());
              assertThat(fx.api.readNode("node-a").execute().getMetadata().getAnnotations())
                  .containsEntry("a", "1");
              return o;
            }));
    rows.add(
        row(
            "GET missing Node",
            404,
            "NotFound",
            fx -> {
              Outcome o = typed(200, () -> fx.api.readNode("node-a").execute());
              assertThat(o.body().path("message").asText()).isEqualTo("nodes \"node-a\" not found");
              assertThat(o.body().path("status").asText()).isEqualTo("Failure");
              assertThat(o.body().path("code").asInt()).isEqualTo(404);
              return o;
            }));
    rows.add(
        row(
            "LIST Nodes with list resourceVersion",
            200,
            "",
            fx -> {
              fx.k.createNode("node-a", Map.of());
              fx.k.createNode("node-b", Map.of());
              long newest = Long.parseLong(fx.rv("node-b"));
              V1NodeList l = fx.api.listNode().execute();
              long after = fx.revision();
              assertThat(l.getItems())
                  .extracting(n -> n.getMetadata().getName())
                  .containsExactly("node-a", "node-b");
              // a quorum list answers the store's revision at the read: the emulator's own
              // revision, on
              // the real server etcd's (which its background writes move on, hence the bounds)
              assertThat(Long.parseLong(l.getMetadata().getResourceVersion()))
                  .isBetween(newest, after);
              if (!fx.real()) {
                assertThat(l.getMetadata().getResourceVersion()).isEqualTo(Long.toString(after));
              }
              return new Outcome(200, "", null);
            }));
    Map<String, List<String>> selectors = new java.util.LinkedHashMap<>();
    selectors.put("gpu=true", List.of("n1"));
    selectors.put("gpu==true", List.of("n1"));
    selectors.put("gpu!=true", List.of("n2", "n3"));
    selectors.put("zone in (a,b)", List.of("n1", "n2"));
    selectors.put("zone notin (a)", List.of("n2", "n3"));
    selectors.put("gpu", List.of("n1", "n2"));
    selectors.put("!gpu", List.of("n3"));
    selectors.forEach(
        (sel, expected) ->
            rows.add(
                row(
                    "LIST labelSelector " + sel,
                    200,
                    "",
                    fx -> {
                      fx.k.create(
                          Map.of(
                              "apiVersion",
                              "v1",
                              "kind",
                              "Node",
                              "metadata",
                              Map.of("name", "n1", "labels", Map.of("gpu", "true", "zone", "a"))));
                      fx.k.create(
                          Map.of(
                              "apiVersion",
                              "v1",
                              "kind",
                              "Node",
                              "metadata",
                              Map.of("name", "n2", "labels", Map.of("gpu", "false", "zone", "b"))));
                      fx.k.create(
                          Map.of(
                              "apiVersion",
                              "v1",
                              "kind",
                              "Node",
                              "metadata",
                              Map.of("name", "n3")));
                      V1NodeList l = fx.api.listNode().labelSelector(sel).execute();
                      fx.observe(
                          "items",
                          l.getItems().stream().map(n -> n.getMetadata().getName()).toList());
                      assertThat(l.getItems())
                          .extracting(n -> n.getMetadata().getName())
                          .containsExactlyElementsOf(expected);
                      return new Outcome(200, "", null);
                    })));
    rows.add(
        row(
            "LIST all-namespaces pods with fieldSelector spec.nodeName",
            200,
            "",
            fx -> {
              fx.createPodOn("default", "p1", null, Map.of());
              fx.createPodOn(Fx.TEAM, "p2", "node-a", Map.of());
              fx.createPodOn(Fx.TEAM, "p3", "node-b", Map.of());
              List<V1Pod> all = fx.api.listPodForAllNamespaces().execute().getItems();
              assertThat(all).hasSize(3);
              List<V1Pod> on =
                  fx.api
                      .listPodForAllNamespaces()
                      .fieldSelector("spec.nodeName=node-a")
                      .execute()
                      .getItems();
              fx.observe(
                  "items",
                  on.stream()
                      .map(p -> p.getMetadata().getNamespace() + "/" + p.getMetadata().getName())
                      .toList());
              assertThat(on).extracting(p -> p.getMetadata().getName()).containsExactly("p2");
              return new Outcome(200, "", null);
            }));
    // --- merge patch
    rows.add(
        row(
            "merge-patch + current metadata.resourceVersion",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              String rv = fx.rv("node-a");
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      MERGE,
                      "{\"metadata\":{\"resourceVersion\":\""
                          + rv
                          + "\",\"annotations\":{\""
                          + LOCK
                          + "\":\"me\"}}}");
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              assertThat(Long.parseLong(fx.rv("node-a"))).isGreaterThan(Long.parseLong(rv));
              return o;
            }));
    rows.add(
        row(
            "merge-patch + stale resourceVersion",
            409,
            "Conflict",
            fx -> {
              lockNode(fx, null);
              String rv = fx.rv("node-a");
              fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"x\":\"1\"}}}");
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      MERGE,
                      "{\"metadata\":{\"resourceVersion\":\""
                          + rv
                          + "\",\"annotations\":{\""
                          + LOCK
                          + "\":\"me\"}}}");
              assertThat(o.body().path("message").asText())
                  .isEqualTo(
                      "Operation cannot be fulfilled on nodes"
                          + " \"node-a\": the object has been modified; please apply your changes to the latest"
                          + " version and try again");
              assertThat(fx.ann("node-a", LOCK)).isNull();
              return o;
            }));
    rows.add(
        row(
            "merge-patch {annotations:{K:null}} removes K",
            200,
            "",
            fx -> {
              lockNode(fx, "holder");
              Outcome o =
                  fx.patchNode(
                      "node-a", MERGE, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":null}}}");
              assertThat(fx.node("node-a").path("metadata").path("annotations").has(LOCK))
                  .isFalse();
              assertThat(fx.ann("node-a", "other")).isNull();
              return o;
            }));
    rows.add(
        row(
            "no-op merge-patch keeps resourceVersion",
            200,
            "",
            fx -> {
              lockNode(fx, "holder");
              String rv = fx.rv("node-a");
              long before = fx.revision();
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      MERGE,
                      "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"holder\"}}}");
              assertThat(fx.rv("node-a")).isEqualTo(rv);
              if (!fx.real()) { // the real server's own background writes move etcd's revision on
                assertThat(fx.revision()).isEqualTo(before);
              }
              return o;
            }));
    rows.add(
        row(
            "patchNode(..).execute() sends application/json",
            415,
            "UnsupportedMediaType",
            fx -> {
              lockNode(fx, null);
              return typed(200, () -> fx.api.patchNode("node-a", new V1Patch("{}")).execute());
            }));
    rows.add(
        row(
                "merge-patch with a non-string annotation value",
                422,
                "Invalid",
                fx -> {
                  lockNode(fx, null);
                  return fx.patchNode(
                      "node-a", MERGE, "{\"metadata\":{\"annotations\":{\"n\":5}}}");
                })
            .differs(
                "the message quotes the patched object as each server holds it (kube-apiserver's has managedFields,"
                    + " the default not-ready taint and an empty status); code, reason, the empty details name and kind and"
                    + " the cause field \"patch\" are the same. hami-lock writes string annotation values only"));
    rows.add(
        row(
            "merge-patch malformed JSON",
            400,
            "BadRequest",
            fx -> {
              lockNode(fx, null);
              return fx.raw("PATCH", "/api/v1/nodes/node-a", MERGE, "{not json");
            }));
    // --- JSON patch
    rows.add(
        row(
            "json-patch test P==current + replace",
            200,
            "",
            fx -> {
              lockNode(fx, "old");
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      JSONP,
                      jsonPatch(op("test", P, "\"old\""), op("replace", P, "\"new\"")));
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("new");
              return o;
            }));
    rows.add(
        row(
            "json-patch test mismatch",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, "old");
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      JSONP,
                      jsonPatch(op("test", P, "\"other\""), op("replace", P, "\"new\"")));
              assertThat(o.body().path("message").asText())
                  .isEqualTo("the server rejected our request due to an error in our request");
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("old");
              return o;
            }));
    rows.add(
        row(
            "json-patch test /metadata/resourceVersion stale",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, null);
              String rv = fx.rv("node-a");
              fx.k.mutate(
                  "nodes",
                  null,
                  "node-a",
                  n -> {
                    ((com.fasterxml.jackson.databind.node.ObjectNode) n.get("metadata"))
                        .putObject("labels")
                        .put("x", "y");
                    return n;
                  });
              return fx.patchNode(
                  "node-a",
                  JSONP,
                  jsonPatch(
                      op("test", "/metadata/resourceVersion", "\"" + rv + "\""),
                      op("add", P, "\"me\"")));
            }));
    rows.add(
        row(
            "json-patch test /metadata/resourceVersion current",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      JSONP,
                      jsonPatch(
                          op("test", "/metadata/resourceVersion", "\"" + fx.rv("node-a") + "\""),
                          op("add", P, "\"me\"")));
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              return o;
            }));
    rows.add(
        row(
            "json-patch replace /metadata/resourceVersion stale",
            409,
            "Conflict",
            fx -> {
              lockNode(fx, null);
              return fx.patchNode(
                  "node-a",
                  JSONP,
                  jsonPatch(
                      op("replace", "/metadata/resourceVersion", "\"1\""), op("add", P, "\"me\"")));
            }));
    rows.add(
        row(
            "json-patch with unescaped / in key",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, null);
              return fx.patchNode(
                  "node-a",
                  JSONP,
                  jsonPatch(op("add", "/metadata/annotations/hami.io/mutex.lock", "\"me\"")));
            }));
    rows.add(
        row(
            "json-patch test P (non-null) on absent key",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, null);
              return fx.patchNode("node-a", JSONP, jsonPatch(op("test", P, "\"me\"")));
            }));
    rows.add(
        row(
            "json-patch test P value:null on absent key + add (acquire-if-free)",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              Outcome o =
                  fx.patchNode(
                      "node-a", JSONP, jsonPatch(op("test", P, "null"), op("add", P, "\"me\"")));
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              return o;
            }));
    rows.add(
        row(
            "json-patch test P value:null on present key",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, "holder");
              Outcome o =
                  fx.patchNode(
                      "node-a", JSONP, jsonPatch(op("test", P, "null"), op("add", P, "\"me\"")));
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("holder");
              return o;
            }));
    rows.add(
        row(
            "json-patch test P value:null with /metadata/annotations absent + add",
            422,
            "Invalid",
            fx -> {
              fx.k.createNode("node-a", Map.of());
              Outcome o =
                  fx.patchNode(
                      "node-a", JSONP, jsonPatch(op("test", P, "null"), op("add", P, "\"me\"")));
              assertThat(fx.node("node-a").path("metadata").has("annotations")).isFalse();
              return o;
            }));
    rows.add(
        row(
            "json-patch test P value:null with /metadata/annotations absent, add the map first",
            200,
            "",
            fx -> {
              fx.k.createNode("node-a", Map.of());
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      JSONP,
                      jsonPatch(
                          op("test", "/metadata/annotations", "null"),
                          op("add", "/metadata/annotations", "{}"),
                          op("test", P, "null"),
                          op("add", P, "\"me\"")));
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              return o;
            }));
    rows.add(
        row(
            "json-patch replace on absent key adds it",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("replace", P, "\"me\"")));
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              return o;
            }));
    rows.add(
        row(
            "json-patch remove absent key",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, null);
              return fx.patchNode("node-a", JSONP, jsonPatch(op("remove", P, null)));
            }));
    rows.add(
        row(
            "json-patch test ME + remove (safe release)",
            200,
            "",
            fx -> {
              lockNode(fx, "me");
              Outcome o =
                  fx.patchNode(
                      "node-a", JSONP, jsonPatch(op("test", P, "\"me\""), op("remove", P, null)));
              assertThat(fx.ann("node-a", LOCK)).isNull();
              return o;
            }));
    rows.add(
        row(
            "json-patch add P when node has no annotations map",
            422,
            "Invalid",
            fx -> {
              fx.k.createNode("node-a", Map.of());
              Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("add", P, "\"me\"")));
              assertThat(fx.node("node-a").path("metadata").has("annotations")).isFalse();
              return o;
            }));
    rows.add(
        row(
            "json-patch undecodable (object instead of array)",
            400,
            "BadRequest",
            fx -> {
              lockNode(fx, null);
              return fx.raw("PATCH", "/api/v1/nodes/node-a", JSONP, "{\"op\":\"add\"}");
            }));
    // --- other patch types
    rows.add(
        row(
            "strategic-merge-patch (maps)",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              Outcome o =
                  fx.patchNode(
                      "node-a", SMP, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              assertThat(fx.ann("node-a", "other")).isEqualTo("x");
              return o;
            }));
    rows.add(
        row(
                "apply-patch+yaml (server-side apply, not emulated)",
                415,
                "UnsupportedMediaType",
                fx -> {
                  lockNode(fx, null);
                  return fx.raw(
                      "PATCH",
                      "/api/v1/nodes/node-a?fieldManager=t",
                      V1Patch.PATCH_FORMAT_APPLY_YAML,
                      "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  annotations:\n    applied: \"yes\"\n");
                })
            .differs(
                200,
                "",
                "kube-apiserver applies it (server-side apply); the emulator does not implement server-side"
                    + " apply and answers 415. hami-lock never sends apply patches (only JSON patch, merge patch and"
                    + " Binding), so it never meets either answer."));
    // --- PUT
    rows.add(
        row(
            "PUT with current RV",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              V1Node n = fx.api.readNode("node-a").execute();
              n.getMetadata().putAnnotationsItem(LOCK, "me");
              Outcome o = typed(200, () -> fx.api.replaceNode("node-a", n).execute());
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              return o;
            }));
    rows.add(
        row(
            "PUT with stale RV",
            409,
            "Conflict",
            fx -> {
              lockNode(fx, null);
              V1Node n = fx.api.readNode("node-a").execute();
              fx.patchNode("node-a", MERGE, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
              n.getMetadata().putAnnotationsItem(LOCK, "me");
              return typed(200, () -> fx.api.replaceNode("node-a", n).execute());
            }));
    rows.add(
        row(
            "PUT with stale RV and unchanged content",
            409,
            "Conflict",
            fx -> {
              lockNode(fx, null);
              V1Node n = fx.api.readNode("node-a").execute();
              fx.patchNode("node-a", MERGE, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
              n.getMetadata().setLabels(Map.of("a", "b"));
              return typed(200, () -> fx.api.replaceNode("node-a", n).execute());
            }));
    rows.add(
        row(
            "PUT without RV (Node allows unconditional update)",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              V1Node n = fx.api.readNode("node-a").execute();
              n.getMetadata().setResourceVersion(null);
              n.getMetadata().putAnnotationsItem(LOCK, "me");
              Outcome o = typed(200, () -> fx.api.replaceNode("node-a", n).execute());
              assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
              // typed PUT sends empty finalizers/managedFields/ownerReferences: omitted on the wire
              assertThat(fx.node("node-a").path("metadata").has("finalizers")).isFalse();
              return o;
            }));
    rows.add(
        row(
            "PUT status subresource keeps spec; main PUT keeps status",
            200,
            "",
            fx -> {
              fx.k.create(
                  Map.of(
                      "apiVersion",
                      "v1",
                      "kind",
                      "Node",
                      "metadata",
                      Map.of("name", "node-a"),
                      "spec",
                      Map.of("podCIDR", "10.0.0.0/24"),
                      "status",
                      Map.of("phase", "Running")));
              V1Node n = fx.api.readNode("node-a").execute();
              n.getSpec().setPodCIDR("10.9.9.0/24");
              n.getStatus().setPhase("Terminated");
              Outcome o = typed(200, () -> fx.api.replaceNodeStatus("node-a", n).execute());
              assertThat(fx.node("node-a").path("spec").path("podCIDR").asText())
                  .isEqualTo("10.0.0.0/24");
              assertThat(fx.node("node-a").path("status").path("phase").asText())
                  .isEqualTo("Terminated");
              V1Node m = fx.api.readNode("node-a").execute();
              m.getStatus().setPhase("Pending");
              m.getSpec().setUnschedulable(true);
              fx.api.replaceNode("node-a", m).execute();
              assertThat(fx.node("node-a").path("status").path("phase").asText())
                  .isEqualTo("Terminated");
              assertThat(fx.node("node-a").path("spec").path("unschedulable").asBoolean()).isTrue();
              return o;
            }));
    // --- DELETE
    rows.add(
        row(
            "DELETE with stale preconditions.resourceVersion",
            409,
            "Conflict",
            fx -> {
              lockNode(fx, null);
              Outcome o =
                  typed(
                      200,
                      () ->
                          fx.api
                              .deleteNode("node-a")
                              .body(
                                  new V1DeleteOptions()
                                      .preconditions(new V1Preconditions().resourceVersion("1")))
                              .execute());
              assertThat(o.body().path("message").asText())
                  .isEqualTo(
                      "Operation cannot be fulfilled on Node \"node-a\": the"
                          + " ResourceVersion in the precondition (1) does not match the ResourceVersion in record ("
                          + fx.rv("node-a")
                          + "). The object might have been modified");
              assertThat(fx.k.get("nodes", null, "node-a")).isPresent();
              return o;
            }));
    rows.add(
        row(
            "DELETE with wrong preconditions.uid",
            409,
            "Conflict",
            fx -> {
              lockNode(fx, null);
              return typed(
                  200,
                  () ->
                      fx.api
                          .deleteNode("node-a")
                          .body(
                              new V1DeleteOptions()
                                  .preconditions(new V1Preconditions().uid("nope")))
                          .execute());
            }));
    rows.add(
        row(
            "DELETE Node answers Status Success",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              String uid = fx.node("node-a").path("metadata").path("uid").asText();
              Outcome o = fx.raw("DELETE", "/api/v1/nodes/node-a", null, null);
              assertThat(o.body().path("kind").asText()).isEqualTo("Status");
              assertThat(o.body().path("status").asText()).isEqualTo("Success");
              assertThat(o.body().path("details").path("uid").asText()).isEqualTo(uid);
              assertThat(fx.k.get("nodes", null, "node-a")).isEmpty();
              return o;
            }));
    rows.add(
        row(
            "DELETE Pod answers the Pod",
            200,
            "",
            fx -> {
              fx.k.createPod("default", "p", Map.of());
              V1Pod p = fx.api.deleteNamespacedPod("p", "default").execute();
              assertThat(p.getMetadata().getName()).isEqualTo("p");
              assertThat(fx.k.get("pods", "default", "p")).isEmpty();
              return new Outcome(200, "", null);
            }));
    rows.add(
        row(
            "DELETE with finalizers sets deletionTimestamp and keeps the object",
            200,
            "",
            fx -> {
              fx.k.create(
                  Map.of(
                      "apiVersion",
                      "v1",
                      "kind",
                      "ConfigMap",
                      "metadata",
                      Map.of("name", "c", "namespace", "default", "finalizers", List.of("x/y"))));
              Outcome o = fx.raw("DELETE", "/api/v1/namespaces/default/configmaps/c", null, null);
              assertThat(o.body().path("metadata").path("deletionTimestamp").asText()).isNotEmpty();
              assertThat(fx.k.get("configmaps", "default", "c")).isPresent();
              fx.raw(
                  "PATCH",
                  "/api/v1/namespaces/default/configmaps/c",
                  MERGE,
                  "{\"metadata\":{\"finalizers\":null}}");
              assertThat(fx.k.get("configmaps", "default", "c")).isEmpty();
              return o;
            }));
    rows.add(
        row(
            "POST pod into a missing namespace",
            404,
            "NotFound",
            fx -> {
              V1Pod p = new V1Pod().metadata(new V1ObjectMeta().name("p").namespace("nope"));
              Outcome o = typed(201, () -> fx.api.createNamespacedPod("nope", p).execute());
              assertThat(o.body().path("message").asText())
                  .isEqualTo("namespaces \"nope\" not found");
              return o;
            }));
    // --- watch
    rows.add(
        row(
            "WATCH ?watch=true via Watch.createWatch: event after patch",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              String rv = fx.rv("node-a");
              ApiClient wc = fx.k.watchApiClient();
              Call call =
                  new io.kubernetes.client.openapi.apis.CoreV1Api(wc)
                      .listNode()
                      .resourceVersion(rv)
                      .watch(true)
                      .timeoutSeconds(5)
                      .buildCall(null);
              try (Watch<V1Node> w =
                  Watch.createWatch(
                      wc, call, new TypeToken<Watch.Response<V1Node>>() {}.getType())) {
                fx.patchNode(
                    "node-a", MERGE, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
                Watch.Response<V1Node> ev = w.next();
                assertThat(ev.type).isEqualTo("MODIFIED");
                assertThat(ev.object.getMetadata().getAnnotations()).containsEntry(LOCK, "me");
              }
              return new Outcome(200, "", null);
            }));
    rows.add(
        row(
            "WATCH resume from resourceVersion replays later events",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              String rv = fx.rv("node-a");
              fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
              fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"2\"}}}");
              ApiClient wc = fx.k.watchApiClient();
              Call call =
                  new io.kubernetes.client.openapi.apis.CoreV1Api(wc)
                      .listNode()
                      .resourceVersion(rv)
                      .watch(true)
                      .timeoutSeconds(5)
                      .buildCall(null);
              List<String> ev = fx.events(call, 2);
              assertThat(ev)
                  .containsExactly("MODIFIED node-a a=1,other=x", "MODIFIED node-a a=2,other=x");
              fx.observe("events", ev);
              return new Outcome(200, "", null);
            }));
    rows.add(
        row(
            "WATCH allowWatchBookmarks: BOOKMARK with a resourceVersion at least the last event's",
            200,
            "",
            fx -> {
              lockNode(fx, null);
              String rv = fx.rv("node-a");
              ApiClient wc = fx.k.watchApiClient();
              // kube-apiserver's watch cache sends bookmarks about once a minute (cacher.go
              // defaultBookmarkFrequency; none before a short watch's timeout, measured with 20 s),
              // and a quiet clean-clone run once saw none within 70 s: 150 s leaves room for the
              // second one; the emulator every bookmarkInterval (1 s in Fx.forConformance())
              Call call =
                  new CoreV1Api(wc)
                      .listNode()
                      .resourceVersion(rv)
                      .allowWatchBookmarks(true)
                      .watch(true)
                      .timeoutSeconds(fx.real() ? 150 : 7)
                      .buildCall(null);
              fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
              long modified = Long.parseLong(fx.rv("node-a"));
              List<String> seq = new ArrayList<>();
              try (Watch<V1Node> w =
                  Watch.createWatch(
                      wc, call, new TypeToken<Watch.Response<V1Node>>() {}.getType())) {
                for (Watch.Response<V1Node> ev : w) {
                  String s = ev.type;
                  if (ev.type.equals("BOOKMARK") && seq.isEmpty()) {
                    // the real watch cache may send a bookmark before it delivers the MODIFIED
                    // event (seen
                    // once in a clean-clone run); such a bookmark is still at or after the watch's
                    // start
                    assertThat(Long.parseLong(ev.object.getMetadata().getResourceVersion()))
                        .isGreaterThanOrEqualTo(Long.parseLong(rv));
                    continue;
                  }
                  if (ev.type.equals("BOOKMARK")) {
                    V1ObjectMeta m = ev.object.getMetadata();
                    assertThat(Long.parseLong(m.getResourceVersion()))
                        .isGreaterThanOrEqualTo(modified);
                    s +=
                        " kind="
                            + ev.object.getKind()
                            + " name="
                            + m.getName()
                            + " annotations="
                            + m.getAnnotations();
                  }
                  seq.add(s);
                  if (ev.type.equals("BOOKMARK")) {
                    break; // the first bookmark; how many more fit in the watch is timing
                  }
                }
              }
              assertThat(seq).first().isEqualTo("MODIFIED");
              assertThat(seq).anyMatch(s -> s.startsWith("BOOKMARK"));
              fx.observe("events up to the first bookmark", seq);
              return new Outcome(200, "", null);
            }));
    rows.add(
        row(
                "WATCH from a compacted resourceVersion: ERROR 410 Expired",
                410,
                "Expired",
                fx -> {
                  lockNode(fx, null);
                  String rv = fx.rv("node-a");
                  fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
                  // a second write: the watch's first event then lies below the compacted revision
                  // (see the next row)
                  fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"2\"}}}");
                  fx.k.compact();
                  ApiClient wc = fx.k.watchApiClient();
                  Call call =
                      new io.kubernetes.client.openapi.apis.CoreV1Api(wc)
                          .listNode()
                          .resourceVersion(rv)
                          .watch(true)
                          .timeoutSeconds(5)
                          .buildCall(null);
                  try (Watch<V1Node> w =
                      Watch.createWatch(
                          wc, call, new TypeToken<Watch.Response<V1Node>>() {}.getType())) {
                    Watch.Response<V1Node> ev = w.next();
                    fx.observe(
                        "first event",
                        ev.type
                            + (ev.status == null
                                ? ""
                                : " "
                                    + ev.status.getCode()
                                    + " "
                                    + ev.status.getReason()
                                    + " "
                                    + ev.status.getMessage()));
                    assertThat(ev.type).isEqualTo("ERROR");
                    return new Outcome(ev.status.getCode(), ev.status.getReason(), null);
                  }
                })
            .onRealServerWith("--watch-cache=false"));
    rows.add(
        row(
                "WATCH (no watch cache) whose first event is at the compacted revision",
                410,
                "Expired",
                fx -> {
                  lockNode(fx, null);
                  String rv = fx.rv("node-a");
                  fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
                  fx.k.compact();
                  ApiClient wc = fx.k.watchApiClient();
                  Call call =
                      new CoreV1Api(wc)
                          .listNode()
                          .resourceVersion(rv)
                          .watch(true)
                          .timeoutSeconds(5)
                          .buildCall(null);
                  try (Watch<V1Node> w =
                      Watch.createWatch(
                          wc, call, new TypeToken<Watch.Response<V1Node>>() {}.getType())) {
                    Watch.Response<V1Node> ev = w.next();
                    fx.observe(
                        "first event",
                        ev.type
                            + (ev.status == null
                                ? ""
                                : " "
                                    + ev.status.getCode()
                                    + " "
                                    + ev.status.getReason()
                                    + " "
                                    + ev.status.getMessage()));
                    return ev.status == null
                        ? new Outcome(200, "", null)
                        : new Outcome(ev.status.getCode(), ev.status.getReason(), null);
                  }
                })
            .onRealServerWith("--watch-cache=false")
            .differs(
                500,
                "InternalError",
                "etcd keeps the compacted revision"
                    + " itself but not the previous version of its key, and kube-apiserver's etcd watcher (asking for previous"
                    + " values) fails such an event with ERROR 500 \"etcd event received with PrevKv=nil\"; the emulator answers"
                    + " 410 Expired. Only without the watch cache (kube-apiserver's default has it) and only when the first event"
                    + " after the resourceVersion is the one compacted at. hami-lock's node lock watch (NodeLockWatch) re-lists"
                    + " on any ERROR event whatever its code, so both answers lead to the same recovery"));
    rows.add(
        row(
                "WATCH from a resourceVersion before the watch window (watch cache on): served or 410",
                200,
                "",
                fx -> {
                  lockNode(fx, null);
                  String rv = fx.rv("node-a");
                  fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
                  fx.k.compact();
                  ApiClient wc = fx.k.watchApiClient();
                  Call call =
                      new CoreV1Api(wc)
                          .listNode()
                          .resourceVersion(rv)
                          .watch(true)
                          .timeoutSeconds(2)
                          .buildCall(null);
                  fx.observe("events", fx.events(call, 2));
                  return new Outcome(200, "", null);
                })
            .differs(
                "kube-apiserver serves watches from its watch cache, whose window does not follow etcd compaction:"
                    + " after a compaction a watch from a recent resourceVersion still gets its events (here the MODIFIED),"
                    + " and 410 comes only once the resourceVersion has left the cache's window (or, without the cache,"
                    + " from etcd at once: the row before). The emulator's compact() expires every older resourceVersion at"
                    + " once, so tests meet the 410 and relist path on demand; hami-lock's informers and watches handle both"
                    + " answers (events: carry on; 410: relist)"));
    rows.add(
        row(
            "GenericKubernetesApi<V1Node> list and 409 on stale merge-patch",
            409,
            "Conflict",
            fx -> {
              lockNode(fx, null);
              GenericKubernetesApi<V1Node, V1NodeList> g =
                  new GenericKubernetesApi<>(
                      V1Node.class, V1NodeList.class, "", "v1", "nodes", fx.client);
              assertThat(g.list().getObject().getItems()).hasSize(1);
              KubernetesApiResponse<V1Node> r =
                  g.patch(
                      "node-a", MERGE, new V1Patch("{\"metadata\":{\"resourceVersion\":\"1\"}}"));
              return new Outcome(r.getHttpStatusCode(), r.getStatus().getReason(), null);
            }));
    rows.add(
        row(
                "DynamicKubernetesApi tolerates injected unknown fields",
                200,
                "",
                fx -> {
                  lockNode(fx, "me");
                  fx.emu.setInjectUnknownFields(true);
                  DynamicKubernetesApi d = new DynamicKubernetesApi("", "v1", "nodes", fx.client);
                  KubernetesApiResponse<DynamicKubernetesObject> r = d.get("node-a");
                  assertThat(r.getObject().getMetadata().getAnnotations())
                      .containsEntry(LOCK, "me");
                  assertThatThrownBy(() -> fx.api.readNode("node-a").execute())
                      .isInstanceOf(IllegalArgumentException.class)
                      .hasMessageContaining(ApiServerEmulator.UNKNOWN_FIELD);
                  return new Outcome(r.getHttpStatusCode(), "", null);
                })
            .emulatorOnly(
                "setInjectUnknownFields is an emulator feature (a real server adds no unknown fields on request);"
                    + " what the real server's own responses hold is the row \"typed client-java 27 reads\""));
    rows.add(
        row(
            "PodGroup (scheduling.x-k8s.io/v1alpha1) create+get via DynamicKubernetesApi",
            201,
            "",
            fx -> {
              fx.ensurePodGroupCrd();
              DynamicKubernetesApi d =
                  new DynamicKubernetesApi(
                      "scheduling.x-k8s.io", "v1alpha1", "podgroups", fx.client);
              DynamicKubernetesObject pg =
                  new DynamicKubernetesObject(
                      com.google.gson.JsonParser.parseString(
                              "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"pg\","
                                  + "\"namespace\":\"default\"},\"spec\":{\"minMember\":2},\"status\":{\"phase\":\"Running\"}}")
                          .getAsJsonObject());
              KubernetesApiResponse<DynamicKubernetesObject> r = d.create(pg);
              JsonNode stored =
                  fx.raw(
                          "GET",
                          "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/pg",
                          null,
                          null)
                      .body();
              assertThat(stored.path("spec").path("minMember").asInt()).isEqualTo(2);
              assertThat(stored.has("status"))
                  .as("status is dropped on create (status subresource)")
                  .isFalse();
              assertThat(stored.path("metadata").path("generation").asInt()).isEqualTo(1);
              assertThat(r.isSuccess()).isTrue();
              assertThat(d.get("default", "pg").getObject().getMetadata().getName())
                  .isEqualTo("pg");
              // GenericKubernetesApi reports 200 for any success; read the real status code raw
              return fx.raw(
                  "POST",
                  "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
                  "application/json",
                  "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
                      + "\"metadata\":{\"name\":\"pg2\"},\"spec\":{\"minMember\":1}}");
            }));
    // --- eviction (pkg/registry/core/pod/storage/eviction.go)
    rows.add(
        row(
            "POST pods/{p}/eviction of a Running pod its PodDisruptionBudget allows no disruption",
            429,
            "TooManyRequests",
            fx -> evictUnderBudget(fx, 0)));
    rows.add(
        row(
            "POST pods/{p}/eviction under a budget allowing one: evicted, the budget decremented",
            201,
            "",
            fx -> evictUnderBudget(fx, 1)));
    // --- binding
    rows.add(
        row(
            "POST pods/{p}/binding via createNamespacedPodBinding: client throws, pod bound",
            201,
            "",
            fx -> {
              fx.k.createPod("default", "p1", Map.of());
              V1Binding b =
                  new V1Binding()
                      .metadata(new V1ObjectMeta().name("p1"))
                      .target(new V1ObjectReference().kind("Node").name("node-a"));
              assertThatThrownBy(
                      () -> fx.api.createNamespacedPodBinding("p1", "default", b).execute())
                  .isInstanceOf(IllegalArgumentException.class);
              JsonNode pod = fx.k.get("pods", "default", "p1").orElseThrow();
              assertThat(pod.path("spec").path("nodeName").asText()).isEqualTo("node-a");
              assertThat(pod.path("status").path("conditions").get(0).path("type").asText())
                  .isEqualTo("PodScheduled");
              return new Outcome(201, "", null);
            }));
    rows.add(
        row(
            "binding via raw buildCall + execute(V1Status): 201 then 409 already assigned",
            409,
            "Conflict",
            fx -> {
              fx.k.createPod("default", "p1", Map.of());
              V1Binding b =
                  new V1Binding()
                      .metadata(new V1ObjectMeta().name("p1").putAnnotationsItem("hami.io/x", "y"))
                      .target(new V1ObjectReference().kind("Node").name("node-a"));
              V1Status s = bind(fx.client, b).getData();
              assertThat(s.getStatus()).isEqualTo("Success");
              assertThat(s.getCode()).isEqualTo(201);
              assertThat(
                      fx.k
                          .get("pods", "default", "p1")
                          .orElseThrow()
                          .path("metadata")
                          .path("annotations")
                          .path("hami.io/x")
                          .asText())
                  .isEqualTo("y");
              b.getTarget().setName("node-b");
              try {
                bind(fx.client, b);
                throw new AssertionError("second binding succeeded");
              } catch (ApiException e) {
                Outcome o = Outcome.of(e);
                assertThat(o.body().path("message").asText())
                    .isEqualTo(
                        "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is already assigned to node \"node-a\"");
                return o;
              }
            }));
    rows.add(
        row(
            "POST pods/{p}/binding raw: body of a successful Binding",
            201,
            "",
            fx -> {
              fx.k.createPod("default", "p1", Map.of());
              return fx.raw(
                  "POST",
                  "/api/v1/namespaces/default/pods/p1/binding",
                  "application/json",
                  "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\"},"
                      + "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-a\"}}");
            }));
    rows.add(
        row(
            "POST pods/{p}/binding of an already bound pod (same node)",
            409,
            "Conflict",
            fx -> {
              fx.createPodOn("default", "p1", "node-a", Map.of());
              return fx.raw(
                  "POST",
                  "/api/v1/namespaces/default/pods/p1/binding",
                  "application/json",
                  "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\"},"
                      + "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-a\"}}");
            }));
    rows.add(
        row(
            "POST pods/{p}/binding with another incarnation's metadata.uid",
            409,
            "Conflict",
            fx -> {
              fx.k.createPod("default", "p1", Map.of());
              Outcome o =
                  fx.raw(
                      "POST",
                      "/api/v1/namespaces/default/pods/p1/binding",
                      "application/json",
                      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"default\","
                          + "\"uid\":\"00000000-0000-0000-0000-000000000000\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                          + "\"name\":\"node-a\"}}");
              // KubernetesCluster.isUidPrecondition: 409 whose body names "UID in precondition" =>
              // NOT_FOUND
              fx.observe("KubernetesCluster reads it as another incarnation", uidPrecondition(o));
              assertThat(uidPrecondition(o)).isTrue();
              return o;
            }));
    // PodBinder's Binding carries the resourceVersion its allocation PATCH returned (the late
    // Binding fence): kube-apiserver checks it as a precondition (pkg/registry/core/pod/storage/
    // storage.go, BindingREST.setPodNodeAndMetadata)
    for (boolean stale : new boolean[] {false, true}) {
      rows.add(
          row(
              "POST pods/{p}/binding with "
                  + (stale ? "a stale" : "the pod's current")
                  + " metadata.resourceVersion",
              stale ? 409 : 201,
              stale ? "Conflict" : "",
              fx -> {
                fx.k.createPod("default", "p1", Map.of());
                String rv =
                    fx.k
                        .get("pods", "default", "p1")
                        .orElseThrow()
                        .at("/metadata/resourceVersion")
                        .asText();
                if (stale) {
                  fx.patchPod(
                      "default", "p1", MERGE, "{\"metadata\":{\"annotations\":{\"x\":\"1\"}}}");
                }
                Outcome o =
                    fx.raw(
                        "POST",
                        "/api/v1/namespaces/default/pods/p1/binding",
                        "application/json",
                        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\","
                            + "\"resourceVersion\":\""
                            + rv
                            + "\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-a\"}}");
                assertThat(
                        fx.k
                            .get("pods", "default", "p1")
                            .orElseThrow()
                            .path("spec")
                            .path("nodeName")
                            .asText())
                    .as("bound")
                    .isEqualTo(stale ? "" : "node-a");
                return o;
              }));
    }
    rows.add(
        row(
            "merge-patch a pod with another incarnation's metadata.uid",
            422,
            "Invalid",
            fx -> {
              fx.k.createPod("default", "p1", Map.of());
              Outcome o =
                  fx.patchPod(
                      "default",
                      "p1",
                      MERGE,
                      "{\"metadata\":{\"annotations\":{\"hami.io/bind-phase\":"
                          + "\"allocating\"},\"uid\":\"00000000-0000-0000-0000-000000000000\"}}");
              fx.observe("KubernetesCluster reads it as another incarnation", uidPrecondition(o));
              assertThat(uidPrecondition(o)).isTrue();
              return o;
            }));
    rows.add(
        row(
            "POST pods/{p}/binding of a missing pod",
            404,
            "NotFound",
            fx ->
                fx.raw(
                    "POST",
                    "/api/v1/namespaces/default/pods/p1/binding",
                    "application/json",
                    "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\"},"
                        + "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-a\"}}")));
    // --- the selectors hami-lock uses (KubernetesCluster, informers)
    rows.add(
        row(
            "LIST all-namespaces pods labelSelector hami.io/vgpu-node=<node>",
            200,
            "",
            fx -> {
              fx.createPodOn("default", "p1", null, Map.of("hami.io/vgpu-node", "node-a"));
              fx.createPodOn(Fx.TEAM, "p2", "node-a", Map.of("hami.io/vgpu-node", "node-a"));
              fx.createPodOn(Fx.TEAM, "p3", "node-b", Map.of("hami.io/vgpu-node", "node-b"));
              fx.createPodOn("default", "p4", "node-a", Map.of());
              Outcome o =
                  fx.raw(
                      "GET", "/api/v1/pods?labelSelector=hami.io%2Fvgpu-node%3Dnode-a", null, null);
              List<String> names = new ArrayList<>();
              o.body()
                  .path("items")
                  .forEach(
                      i ->
                          names.add(
                              i.path("metadata").path("namespace").asText()
                                  + "/"
                                  + i.path("metadata").path("name").asText()));
              assertThat(names).containsExactlyInAnyOrder("default/p1", "team/p2");
              fx.observe("items", names);
              return new Outcome(o.code(), "", null);
            }));
    rows.add(
        row(
            "LIST nodes fieldSelector metadata.name=<node>",
            200,
            "",
            fx -> {
              fx.k.createNode("node-a", Map.of());
              fx.k.createNode("node-b", Map.of());
              V1NodeList l = fx.api.listNode().fieldSelector("metadata.name=node-b").execute();
              fx.observe(
                  "items", l.getItems().stream().map(n -> n.getMetadata().getName()).toList());
              assertThat(l.getItems())
                  .extracting(n -> n.getMetadata().getName())
                  .containsExactly("node-b");
              Outcome bad =
                  fx.raw("GET", "/api/v1/nodes?fieldSelector=spec.nodeName%3Dx", null, null);
              fx.observe(
                  "unsupported field selector on nodes",
                  bad.code() + " " + bad.reason() + " " + bad.body().path("message").asText());
              return new Outcome(200, "", null);
            }));
    rows.add(
        row(
            "WATCH nodes fieldSelector metadata.name=<node>: only that node's events",
            200,
            "",
            fx -> {
              fx.k.createNode("node-a", Map.of());
              fx.k.createNode("node-b", Map.of());
              String rv = fx.rv("node-b");
              Call call =
                  new CoreV1Api(fx.k.watchApiClient())
                      .listNode()
                      .fieldSelector("metadata.name=node-b")
                      .resourceVersion(rv)
                      .watch(true)
                      .timeoutSeconds(5)
                      .buildCall(null);
              fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
              fx.patchNode("node-b", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"2\"}}}");
              fx.k.delete("nodes", null, "node-b");
              List<String> ev = fx.events(call, 2);
              assertThat(ev).containsExactly("MODIFIED node-b a=2", "DELETED node-b a=2");
              fx.observe("events", ev);
              return new Outcome(200, "", null);
            }));
    rows.add(
        row(
            "WATCH all-namespaces pods fieldSelector spec.nodeName=<node>: a binding shows as ADDED",
            200,
            "",
            fx -> {
              fx.k.createPod("default", "p1", Map.of("a", "0"));
              fx.createPodOn("default", "p2", "node-b", Map.of());
              String rv =
                  fx.k
                      .get("pods", "default", "p2")
                      .orElseThrow()
                      .path("metadata")
                      .path("resourceVersion")
                      .asText();
              Call call =
                  new CoreV1Api(fx.k.watchApiClient())
                      .listPodForAllNamespaces()
                      .fieldSelector("spec.nodeName=node-a")
                      .resourceVersion(rv)
                      .watch(true)
                      .timeoutSeconds(5)
                      .buildCall(null);
              V1Binding b =
                  new V1Binding()
                      .metadata(new V1ObjectMeta().name("p1"))
                      .target(new V1ObjectReference().kind("Node").name("node-a"));
              bind(fx.client, b);
              fx.patchPod("default", "p1", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
              List<String> ev = fx.events(call, 2);
              assertThat(ev).containsExactly("ADDED p1 a=0", "MODIFIED p1 a=1");
              fx.observe("events", ev);
              return new Outcome(200, "", null);
            }));
    // --- unknown fields in the real server's answers
    rows.add(
        row(
            "typed client-java 27 reads (Node with status, Pod bound and unbound, lists, Namespace)",
            200,
            "",
            fx -> {
              fx.k.create(
                  Map.of(
                      "apiVersion",
                      "v1",
                      "kind",
                      "Node",
                      "metadata",
                      Map.of(
                          "name",
                          "node-a",
                          "labels",
                          Map.of("gpu", "true"),
                          "annotations",
                          Map.of(LOCK, "me")),
                      "spec",
                      Map.of("podCIDR", "10.0.0.0/24"),
                      "status",
                      Map.of(
                          "capacity",
                          Map.of("cpu", "4", "nvidia.com/gpu", "2"),
                          "allocatable",
                          Map.of("cpu", "4", "nvidia.com/gpu", "2"),
                          "conditions",
                          List.of(Map.of("type", "Ready", "status", "True")))));
              fx.createPodOn("default", "p1", null, Map.of("hami.io/vgpu-node", "node-a"));
              fx.k.createPod("default", "p2", Map.of("hami.io/vgpu-devices-to-allocate", "x"));
              bind(
                  fx.client,
                  new V1Binding()
                      .metadata(new V1ObjectMeta().name("p2"))
                      .target(new V1ObjectReference().kind("Node").name("node-a")),
                  "p2");
              List<String> failures = new ArrayList<>();
              Map<String, ApiCall> calls = new java.util.LinkedHashMap<>();
              calls.put("readNode", () -> fx.api.readNode("node-a").execute());
              calls.put("listNode", () -> fx.api.listNode().execute());
              calls.put(
                  "readNamespacedPod unbound",
                  () -> fx.api.readNamespacedPod("p1", "default").execute());
              calls.put(
                  "readNamespacedPod bound",
                  () -> fx.api.readNamespacedPod("p2", "default").execute());
              calls.put(
                  "listPodForAllNamespaces", () -> fx.api.listPodForAllNamespaces().execute());
              calls.put("readNamespace", () -> fx.api.readNamespace("default").execute());
              calls.forEach(
                  (name, c) -> {
                    try {
                      c.run();
                    } catch (ApiException | RuntimeException e) {
                      failures.add(name + ": " + e.getMessage());
                    }
                  });
              fx.observe("typed read failures", failures);
              assertThat(failures).isEmpty();
              return new Outcome(200, "", null);
            }));
    // --- a patch that does not apply vs a patched object that is invalid
    // (ApiFailures.isPatchNotApplicable)
    rows.add(
        row(
            "json-patch add an invalid annotation key: 422 naming the object and field",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, null);
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      JSONP,
                      jsonPatch(op("add", "/metadata/annotations/a~1b~1c", "\"v\"")));
              fx.observe("patch not applicable (ApiFailures' rule)", patchNotApplicable(o));
              assertThat(patchNotApplicable(o)).isFalse();
              return o;
            }));
    rows.add(
        row(
            "merge-patch an annotation value over 256 KiB: 422 naming the object and field",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, null);
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      MERGE,
                      "{\"metadata\":{\"annotations\":{\"big\":\"" + "x".repeat(262_145) + "\"}}}");
              fx.observe("patch not applicable (ApiFailures' rule)", patchNotApplicable(o));
              assertThat(patchNotApplicable(o)).isFalse();
              return o;
            }));
    rows.add(
        row(
            "json-patch add an annotation key with an invalid name part",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, null);
              Outcome o =
                  fx.patchNode(
                      "node-a",
                      JSONP,
                      jsonPatch(op("add", "/metadata/annotations/hami.io~1-bad", "\"v\"")));
              fx.observe("patch not applicable (ApiFailures' rule)", patchNotApplicable(o));
              return o;
            }));
    rows.add(
        row(
            "json-patch failed test: 422 without object name or field (patch not applicable)",
            422,
            "Invalid",
            fx -> {
              lockNode(fx, "holder");
              Outcome o =
                  fx.patchNode(
                      "node-a", JSONP, jsonPatch(op("test", P, "null"), op("add", P, "\"me\"")));
              fx.observe("patch not applicable (ApiFailures' rule)", patchNotApplicable(o));
              assertThat(patchNotApplicable(o)).isTrue();
              return o;
            }));
    // --- misc
    rows.add(
        row(
            "/version via VersionApi",
            200,
            "",
            fx -> {
              assertThat(new VersionApi(fx.client).getCode().execute().getMajor()).isEqualTo("1");
              return new Outcome(200, "", null);
            }));
    rows.add(
        row(
                "fault injection: 2x500 then success on the 3rd attempt",
                200,
                "",
                fx -> {
                  lockNode(fx, null);
                  FaultHandle h =
                      fx.emu.addFault(
                          FaultRule.matching()
                              .verb("patch")
                              .resource("nodes")
                              .times(2)
                              .respondStatus(500, "InternalError", "injected"));
                  Outcome last = null;
                  for (int i = 0; i < 3; i++) {
                    last =
                        fx.patchNode(
                            "node-a",
                            MERGE,
                            "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
                    if (i < 2) {
                      assertThat(last.code()).isEqualTo(500);
                    }
                  }
                  assertThat(h.hits()).isEqualTo(2);
                  assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
                  return last;
                })
            .emulatorOnly("fault injection is an emulator feature, not an API behaviour"));
    rows.add(
        row(
                "pod spec.nodeName cannot be changed by patch",
                422,
                "Invalid",
                fx -> {
                  fx.k.createPod("default", "p", Map.of());
                  return fx.patchPod("default", "p", MERGE, "{\"spec\":{\"nodeName\":\"node-a\"}}");
                })
            .differs(
                "kube-apiserver appends a diff of its internal PodSpec to the Forbidden message and cause;"
                    + " the emulator does not. Code, reason, cause field and cause reason are the same; hami-lock never"
                    + " changes a pod's spec (it binds through pods/binding) and does not parse messages"));
    draRows(rows);
    return rows.stream();
  }

  private static final String DRA = "/apis/resource.k8s.io/v1";

  /** A ResourceSlice publishing one device on {@code node}. */
  private static Map<String, Object> slice(String name, String node, String driver) {
    return Map.of(
        "apiVersion",
        "resource.k8s.io/v1",
        "kind",
        "ResourceSlice",
        "metadata",
        Map.of("name", name),
        "spec",
        Map.of(
            "driver",
            driver,
            "nodeName",
            node,
            "pool",
            Map.of("name", node, "generation", 1, "resourceSliceCount", 1),
            "devices",
            List.of(
                Map.of(
                    "name",
                    "gpu-0",
                    "attributes",
                    Map.of("uuid", Map.of("string", "GPU-" + name))))));
  }

  /** A ResourceClaim for one device of class {@code gpu.nvidia.com}, as JSON. */
  private static String claim(String ns, String name, String status) {
    return "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
        + "\"metadata\":{\"name\":\""
        + name
        + "\",\"namespace\":\""
        + ns
        + "\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
        + "{\"deviceClassName\":\"gpu.nvidia.com\",\"allocationMode\":\"ExactCount\","
        + "\"count\":1}}]}}"
        + (status == null ? "" : ",\"status\":" + status)
        + "}";
  }

  /** The status kube-scheduler writes when it allocates {@code device} on node-a. */
  private static final String ALLOCATED =
      "{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":"
          + "\"gpu.nvidia.com\",\"pool\":\"node-a\",\"device\":\"gpu-0\"}]},"
          + "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":"
          + "\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-a\"]}]}]}}}";

  /** Item names of a list answer. */
  private static List<String> names(Outcome o) {
    List<String> out = new ArrayList<>();
    o.body().path("items").forEach(i -> out.add(i.path("metadata").path("name").asText()));
    return out;
  }

  /**
   * GET {@code path} (a LIST with resourceVersion=0, served from kube-apiserver's watch cache,
   * which may lag a write by milliseconds) until {@code done} holds, at most 5 s.
   */
  private static Outcome listUntil(Fx fx, String path, java.util.function.Predicate<Outcome> done)
      throws Exception {
    Outcome o = fx.raw("GET", path, null, null);
    for (int i = 0; i < 50 && o.code() == 200 && !done.test(o); i++) {
      Thread.sleep(100);
      o = fx.raw("GET", path, null, null);
    }
    return o;
  }

  /** resource.k8s.io/v1, as hami-lock reads it for issue 28 (KubernetesWire.DraReads). */
  private static void draRows(List<Row> rows) {
    rows.add(
        row(
            "GET /apis/resource.k8s.io/v1 lists slices, claims (with status), classes",
            200,
            "",
            fx -> {
              Outcome o = fx.raw("GET", DRA, null, null);
              for (JsonNode r : o.body().path("resources")) {
                String name = r.path("name").asText();
                if (List.of("resourceslices", "resourceclaims", "resourceclaims/status")
                        .contains(name)
                    || name.equals("deviceclasses")) {
                  fx.observe(
                      name,
                      Map.of(
                          "namespaced", r.path("namespaced").asBoolean(),
                          "kind", r.path("kind").asText(),
                          "verbs", r.path("verbs")));
                }
              }
              return new Outcome(o.code(), o.reason(), o.body().path("groupVersion"));
            }));
    rows.add(
        row(
            "LIST ResourceSlices fieldSelector spec.nodeName, spec.driver, resourceVersion=0",
            200,
            "",
            fx -> {
              fx.k.create(slice("a-nvidia", "node-a", "gpu.nvidia.com"));
              fx.k.create(slice("a-hami", "node-a", "hami-core-gpu.project-hami.io"));
              fx.k.create(slice("b-nvidia", "node-b", "gpu.nvidia.com"));
              Outcome o =
                  listUntil(
                      fx,
                      DRA
                          + "/resourceslices?fieldSelector=spec.nodeName%3Dnode-a&resourceVersion=0",
                      x -> names(x).size() == 2);
              fx.observe("node-a", names(o));
              fx.observe(
                  "node-a, gpu.nvidia.com",
                  names(
                      listUntil(
                          fx,
                          DRA
                              + "/resourceslices?fieldSelector=spec.nodeName%3Dnode-a,"
                              + "spec.driver%3Dgpu.nvidia.com&resourceVersion=0",
                          x -> !names(x).isEmpty())));
              assertThat(names(o)).containsExactly("a-hami", "a-nvidia");
              return o;
            }));
    rows.add(
        row(
            "LIST ResourceSlices with an unsupported field selector",
            400,
            "BadRequest",
            fx ->
                fx.raw("GET", DRA + "/resourceslices?fieldSelector=spec.devices%3Dx", null, null)));
    rows.add(
        row(
            "POST ResourceClaim with a status: the status is dropped",
            201,
            "",
            fx -> {
              Outcome o =
                  fx.raw(
                      "POST",
                      DRA + "/namespaces/default/resourceclaims",
                      "application/json",
                      claim("default", "c1", ALLOCATED));
              fx.observe("status", o.body().path("status"));
              assertThat(o.body().path("status").has("allocation")).isFalse();
              return o;
            }));
    rows.add(
        row(
            "PATCH ResourceClaim /status allocation; LIST all namespaces resourceVersion=0",
            200,
            "",
            fx -> {
              fx.raw(
                  "POST",
                  DRA + "/namespaces/default/resourceclaims",
                  "application/json",
                  claim("default", "c1", null));
              fx.raw(
                  "POST",
                  DRA + "/namespaces/" + Fx.TEAM + "/resourceclaims",
                  "application/json",
                  claim(Fx.TEAM, "c2", null));
              Outcome p =
                  fx.raw(
                      "PATCH",
                      DRA + "/namespaces/default/resourceclaims/c1/status",
                      "application/merge-patch+json",
                      "{\"status\":" + ALLOCATED + "}");
              fx.observe("patch", p.code());
              Outcome o =
                  listUntil(
                      fx,
                      DRA + "/resourceclaims?resourceVersion=0",
                      x ->
                          names(x).size() == 2
                              && x.body().toString().contains("\"device\":\"gpu-0\""));
              for (JsonNode c : o.body().path("items")) {
                fx.observe(
                    c.path("metadata").path("namespace").asText()
                        + "/"
                        + c.path("metadata").path("name").asText(),
                    c.path("status").path("allocation").path("devices"));
              }
              assertThat(o.body().toString()).contains("\"device\":\"gpu-0\"");
              return o;
            }));
    rows.add(
        row(
            "POST DeviceClass mapping nvidia.com/gpu (extendedResourceName)",
            201,
            "",
            fx -> {
              Outcome o =
                  fx.raw(
                      "POST",
                      DRA + "/deviceclasses",
                      "application/json",
                      "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\","
                          + "\"metadata\":{\"name\":\"gpu.nvidia.com\"},\"spec\":"
                          + "{\"extendedResourceName\":\"nvidia.com/gpu\"}}");
              fx.observe(
                  "spec",
                  listUntil(fx, DRA + "/deviceclasses?resourceVersion=0", x -> !names(x).isEmpty())
                      .body()
                      .path("items")
                      .path(0)
                      .path("spec"));
              return o;
            }));
  }

  /**
   * KubernetesCluster.isUidPrecondition's rule (hami-lock-k8s): the answer to a request for another
   * incarnation.
   */
  static boolean uidPrecondition(Outcome o) {
    String body = o.body() == null ? "" : o.body().toString();
    return (o.code() == 409 && body.contains("UID in precondition"))
        || (o.code() == 422 && body.contains("metadata.uid"));
  }

  /**
   * ApiFailures.isPatchNotApplicable's rule (hami-lock-k8s): a 422 naming no object and no field.
   */
  static boolean patchNotApplicable(Outcome o) {
    if (o.code() != 422) {
      return false;
    }
    JsonNode details = o.body().path("details");
    if (!details.isObject()) {
      return true;
    }
    if (!details.path("name").asText("").isEmpty()) {
      return false;
    }
    for (JsonNode c : details.path("causes")) {
      if (!c.path("field").asText("").isEmpty()) {
        return false;
      }
    }
    return true;
  }

  private static io.kubernetes.client.openapi.ApiResponse<V1Status> bind(ApiClient c, V1Binding b)
      throws ApiException {
    return bind(c, b, "p1");
  }

  private static io.kubernetes.client.openapi.ApiResponse<V1Status> bind(
      ApiClient c, V1Binding b, String pod) throws ApiException {
    Call call =
        c.buildCall(
            c.getBasePath(),
            "/api/v1/namespaces/default/pods/" + pod + "/binding",
            "POST",
            new ArrayList<Pair>(),
            new ArrayList<Pair>(),
            b,
            new HashMap<>(Map.of("Content-Type", "application/json", "Accept", "application/json")),
            new HashMap<>(),
            new HashMap<>(),
            new String[0],
            null);
    return c.execute(call, V1Status.class);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void behavesLikeKubeApiserver(Row row) throws Exception {
    try (Fx fx = Fx.forConformance()) {
      Outcome o = row.probe().run(fx.prepare());
      assertThat(o.code())
          .as("%s: HTTP status (body %s)", row.operation(), o.body())
          .isEqualTo(row.code());
      if (!row.reason().isEmpty()) {
        assertThat(o.reason()).as("%s: Status reason", row.operation()).isEqualTo(row.reason());
      }
    }
  }
}
