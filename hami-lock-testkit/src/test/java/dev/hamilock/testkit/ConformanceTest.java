package dev.hamilock.testkit;

import static dev.hamilock.testkit.Fx.LOCK;
import static dev.hamilock.testkit.Fx.P;
import static dev.hamilock.testkit.Fx.typed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.gson.reflect.TypeToken;
import dev.hamilock.testkit.Fx.Outcome;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
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
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One row per operation of kube-api-notes §2's capability matrix (plus the neighbouring
 * semantics of §6), each asserting the "real kube-apiserver" column: HTTP status, Status reason
 * and the effect on the stored object, through the official client-java 27.0.0. Every row gets
 * a fresh emulator.
 */
class ConformanceTest {
  private static final String MERGE = V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH;
  private static final String JSONP = V1Patch.PATCH_FORMAT_JSON_PATCH;
  private static final String SMP = V1Patch.PATCH_FORMAT_STRATEGIC_MERGE_PATCH;

  interface Probe {
    Outcome run(Fx fx) throws Exception;
  }

  record Row(String operation, int code, String reason, Probe probe) {
    @Override
    public String toString() {
      return operation;
    }
  }

  private static Row row(String op, int code, String reason, Probe p) {
    return new Row(op, code, reason, p);
  }

  private static V1Node newNode(String name) {
    return new V1Node().metadata(new V1ObjectMeta().name(name));
  }

  private static void lockNode(Fx fx, String holder) {
    fx.emu.createNode("node-a", holder == null ? Map.of("other", "x") : Map.of(LOCK, holder));
  }

  private static String jsonPatch(String... ops) {
    return "[" + String.join(",", ops) + "]";
  }

  private static String op(String op, String path, String valueJson) {
    return "{\"op\":\"" + op + "\",\"path\":\"" + path + "\""
        + (valueJson == null ? "" : ",\"value\":" + valueJson) + "}";
  }

  static Stream<Row> rows() {
    List<Row> rows = new ArrayList<>();
    // --- create / get / list
    rows.add(row("POST create Node", 201, "", fx -> {
      Outcome o = typed(201, () -> fx.api.createNode(newNode("node-a")).execute());
      JsonNode m = fx.node("node-a").path("metadata");
      assertThat(m.path("uid").asText()).isNotEmpty();
      assertThat(m.path("creationTimestamp").asText()).endsWith("Z");
      assertThat(Long.parseLong(m.path("resourceVersion").asText())).isPositive();
      return o;
    }));
    rows.add(row("POST duplicate Node", 409, "AlreadyExists", fx -> {
      fx.emu.createNode("node-a", Map.of());
      Outcome o = typed(201, () -> fx.api.createNode(newNode("node-a")).execute());
      assertThat(o.body().path("message").asText()).isEqualTo("nodes \"node-a\" already exists");
      assertThat(o.body().path("details").path("kind").asText()).isEqualTo("nodes");
      return o;
    }));
    rows.add(row("GET Node", 200, "", fx -> {
      fx.emu.createNode("node-a", Map.of("a", "1"));
      Outcome o = typed(200, () -> fx.api.readNode("node-a").execute());
      assertThat(fx.api.readNode("node-a").execute().getMetadata().getAnnotations()).containsEntry("a", "1");
      return o;
    }));
    rows.add(row("GET missing Node", 404, "NotFound", fx -> {
      Outcome o = typed(200, () -> fx.api.readNode("node-a").execute());
      assertThat(o.body().path("message").asText()).isEqualTo("nodes \"node-a\" not found");
      assertThat(o.body().path("status").asText()).isEqualTo("Failure");
      assertThat(o.body().path("code").asInt()).isEqualTo(404);
      return o;
    }));
    rows.add(row("LIST Nodes with list resourceVersion", 200, "", fx -> {
      fx.emu.createNode("node-a", Map.of());
      fx.emu.createNode("node-b", Map.of());
      V1NodeList l = fx.api.listNode().execute();
      assertThat(l.getItems()).extracting(n -> n.getMetadata().getName()).containsExactly("node-a", "node-b");
      assertThat(l.getMetadata().getResourceVersion()).isEqualTo(Long.toString(fx.emu.revision()));
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
    selectors.forEach((sel, expected) -> rows.add(row("LIST labelSelector " + sel, 200, "", fx -> {
      fx.emu.create(Map.of("apiVersion", "v1", "kind", "Node", "metadata",
          Map.of("name", "n1", "labels", Map.of("gpu", "true", "zone", "a"))));
      fx.emu.create(Map.of("apiVersion", "v1", "kind", "Node", "metadata",
          Map.of("name", "n2", "labels", Map.of("gpu", "false", "zone", "b"))));
      fx.emu.create(Map.of("apiVersion", "v1", "kind", "Node", "metadata", Map.of("name", "n3")));
      V1NodeList l = fx.api.listNode().labelSelector(sel).execute();
      assertThat(l.getItems()).extracting(n -> n.getMetadata().getName()).containsExactlyElementsOf(expected);
      return new Outcome(200, "", null);
    })));
    rows.add(row("LIST all-namespaces pods with fieldSelector spec.nodeName", 200, "", fx -> {
      fx.emu.createNamespace("team");
      fx.emu.createPod("default", "p1", Map.of());
      fx.emu.createPod("team", "p2", Map.of());
      fx.emu.mutate("pods", "team", "p2", p -> {
        ((com.fasterxml.jackson.databind.node.ObjectNode) p.get("spec")).put("nodeName", "node-a");
        return p;
      });
      List<V1Pod> all = fx.api.listPodForAllNamespaces().execute().getItems();
      assertThat(all).hasSize(2);
      List<V1Pod> on = fx.api.listPodForAllNamespaces().fieldSelector("spec.nodeName=node-a").execute().getItems();
      assertThat(on).extracting(p -> p.getMetadata().getName()).containsExactly("p2");
      return new Outcome(200, "", null);
    }));
    // --- merge patch
    rows.add(row("merge-patch + current metadata.resourceVersion", 200, "", fx -> {
      lockNode(fx, null);
      String rv = fx.rv("node-a");
      Outcome o = fx.patchNode("node-a", MERGE, "{\"metadata\":{\"resourceVersion\":\"" + rv
          + "\",\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
      assertThat(Long.parseLong(fx.rv("node-a"))).isGreaterThan(Long.parseLong(rv));
      return o;
    }));
    rows.add(row("merge-patch + stale resourceVersion", 409, "Conflict", fx -> {
      lockNode(fx, null);
      String rv = fx.rv("node-a");
      fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"x\":\"1\"}}}");
      Outcome o = fx.patchNode("node-a", MERGE, "{\"metadata\":{\"resourceVersion\":\"" + rv
          + "\",\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
      assertThat(o.body().path("message").asText()).isEqualTo("Operation cannot be fulfilled on nodes"
          + " \"node-a\": the object has been modified; please apply your changes to the latest"
          + " version and try again");
      assertThat(fx.ann("node-a", LOCK)).isNull();
      return o;
    }));
    rows.add(row("merge-patch {annotations:{K:null}} removes K", 200, "", fx -> {
      lockNode(fx, "holder");
      Outcome o = fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":null}}}");
      assertThat(fx.node("node-a").path("metadata").path("annotations").has(LOCK)).isFalse();
      assertThat(fx.ann("node-a", "other")).isNull();
      return o;
    }));
    rows.add(row("no-op merge-patch keeps resourceVersion", 200, "", fx -> {
      lockNode(fx, "holder");
      String rv = fx.rv("node-a");
      long before = fx.emu.revision();
      Outcome o = fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"holder\"}}}");
      assertThat(fx.rv("node-a")).isEqualTo(rv);
      assertThat(fx.emu.revision()).isEqualTo(before);
      return o;
    }));
    rows.add(row("patchNode(..).execute() sends application/json", 415, "UnsupportedMediaType", fx -> {
      lockNode(fx, null);
      return typed(200, () -> fx.api.patchNode("node-a", new V1Patch("{}")).execute());
    }));
    rows.add(row("merge-patch with a non-string annotation value", 422, "Invalid", fx -> {
      lockNode(fx, null);
      return fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"n\":5}}}");
    }));
    rows.add(row("merge-patch malformed JSON", 400, "BadRequest", fx -> {
      lockNode(fx, null);
      return fx.raw("PATCH", "/api/v1/nodes/node-a", MERGE, "{not json");
    }));
    // --- JSON patch
    rows.add(row("json-patch test P==current + replace", 200, "", fx -> {
      lockNode(fx, "old");
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("test", P, "\"old\""), op("replace", P, "\"new\"")));
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("new");
      return o;
    }));
    rows.add(row("json-patch test mismatch", 422, "Invalid", fx -> {
      lockNode(fx, "old");
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("test", P, "\"other\""), op("replace", P, "\"new\"")));
      assertThat(o.body().path("message").asText())
          .isEqualTo("the server rejected our request due to an error in our request");
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("old");
      return o;
    }));
    rows.add(row("json-patch test /metadata/resourceVersion stale", 422, "Invalid", fx -> {
      lockNode(fx, null);
      String rv = fx.rv("node-a");
      fx.emu.mutate("nodes", null, "node-a", n -> {
        ((com.fasterxml.jackson.databind.node.ObjectNode) n.get("metadata")).putObject("labels").put("x", "y");
        return n;
      });
      return fx.patchNode("node-a", JSONP, jsonPatch(op("test", "/metadata/resourceVersion", "\"" + rv + "\""),
          op("add", P, "\"me\"")));
    }));
    rows.add(row("json-patch test /metadata/resourceVersion current", 200, "", fx -> {
      lockNode(fx, null);
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(
          op("test", "/metadata/resourceVersion", "\"" + fx.rv("node-a") + "\""), op("add", P, "\"me\"")));
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
      return o;
    }));
    rows.add(row("json-patch replace /metadata/resourceVersion stale", 409, "Conflict", fx -> {
      lockNode(fx, null);
      return fx.patchNode("node-a", JSONP, jsonPatch(op("replace", "/metadata/resourceVersion", "\"1\""),
          op("add", P, "\"me\"")));
    }));
    rows.add(row("json-patch with unescaped / in key", 422, "Invalid", fx -> {
      lockNode(fx, null);
      return fx.patchNode("node-a", JSONP, jsonPatch(op("add", "/metadata/annotations/hami.io/mutex.lock", "\"me\"")));
    }));
    rows.add(row("json-patch test P (non-null) on absent key", 422, "Invalid", fx -> {
      lockNode(fx, null);
      return fx.patchNode("node-a", JSONP, jsonPatch(op("test", P, "\"me\"")));
    }));
    rows.add(row("json-patch test P value:null on absent key + add (acquire-if-free)", 200, "", fx -> {
      lockNode(fx, null);
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("test", P, "null"), op("add", P, "\"me\"")));
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
      return o;
    }));
    rows.add(row("json-patch test P value:null on present key", 422, "Invalid", fx -> {
      lockNode(fx, "holder");
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("test", P, "null"), op("add", P, "\"me\"")));
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("holder");
      return o;
    }));
    rows.add(row("json-patch replace on absent key adds it", 200, "", fx -> {
      lockNode(fx, null);
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("replace", P, "\"me\"")));
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
      return o;
    }));
    rows.add(row("json-patch remove absent key", 422, "Invalid", fx -> {
      lockNode(fx, null);
      return fx.patchNode("node-a", JSONP, jsonPatch(op("remove", P, null)));
    }));
    rows.add(row("json-patch test ME + remove (safe release)", 200, "", fx -> {
      lockNode(fx, "me");
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("test", P, "\"me\""), op("remove", P, null)));
      assertThat(fx.ann("node-a", LOCK)).isNull();
      return o;
    }));
    rows.add(row("json-patch add P when node has no annotations map", 422, "Invalid", fx -> {
      fx.emu.createNode("node-a", Map.of());
      Outcome o = fx.patchNode("node-a", JSONP, jsonPatch(op("add", P, "\"me\"")));
      assertThat(fx.node("node-a").path("metadata").has("annotations")).isFalse();
      return o;
    }));
    rows.add(row("json-patch undecodable (object instead of array)", 400, "BadRequest", fx -> {
      lockNode(fx, null);
      return fx.raw("PATCH", "/api/v1/nodes/node-a", JSONP, "{\"op\":\"add\"}");
    }));
    // --- other patch types
    rows.add(row("strategic-merge-patch (maps)", 200, "", fx -> {
      lockNode(fx, null);
      Outcome o = fx.patchNode("node-a", SMP, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
      assertThat(fx.ann("node-a", "other")).isEqualTo("x");
      return o;
    }));
    rows.add(row("apply-patch+yaml (server-side apply, not emulated)", 415, "UnsupportedMediaType", fx -> {
      lockNode(fx, null);
      return fx.raw("PATCH", "/api/v1/nodes/node-a?fieldManager=t", V1Patch.PATCH_FORMAT_APPLY_YAML,
          "metadata:\n  name: node-a\n");
    }));
    // --- PUT
    rows.add(row("PUT with current RV", 200, "", fx -> {
      lockNode(fx, null);
      V1Node n = fx.api.readNode("node-a").execute();
      n.getMetadata().putAnnotationsItem(LOCK, "me");
      Outcome o = typed(200, () -> fx.api.replaceNode("node-a", n).execute());
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
      return o;
    }));
    rows.add(row("PUT with stale RV", 409, "Conflict", fx -> {
      lockNode(fx, null);
      V1Node n = fx.api.readNode("node-a").execute();
      fx.patchNode("node-a", MERGE, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
      n.getMetadata().putAnnotationsItem(LOCK, "me");
      return typed(200, () -> fx.api.replaceNode("node-a", n).execute());
    }));
    rows.add(row("PUT with stale RV and unchanged content", 409, "Conflict", fx -> {
      lockNode(fx, null);
      V1Node n = fx.api.readNode("node-a").execute();
      fx.patchNode("node-a", MERGE, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
      n.getMetadata().setLabels(Map.of("a", "b"));
      return typed(200, () -> fx.api.replaceNode("node-a", n).execute());
    }));
    rows.add(row("PUT without RV (Node allows unconditional update)", 200, "", fx -> {
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
    rows.add(row("PUT status subresource keeps spec; main PUT keeps status", 200, "", fx -> {
      fx.emu.create(Map.of("apiVersion", "v1", "kind", "Node", "metadata", Map.of("name", "node-a"),
          "spec", Map.of("podCIDR", "10.0.0.0/24"), "status", Map.of("phase", "Running")));
      V1Node n = fx.api.readNode("node-a").execute();
      n.getSpec().setPodCIDR("10.9.9.0/24");
      n.getStatus().setPhase("Terminated");
      Outcome o = typed(200, () -> fx.api.replaceNodeStatus("node-a", n).execute());
      assertThat(fx.node("node-a").path("spec").path("podCIDR").asText()).isEqualTo("10.0.0.0/24");
      assertThat(fx.node("node-a").path("status").path("phase").asText()).isEqualTo("Terminated");
      V1Node m = fx.api.readNode("node-a").execute();
      m.getStatus().setPhase("Pending");
      m.getSpec().setUnschedulable(true);
      fx.api.replaceNode("node-a", m).execute();
      assertThat(fx.node("node-a").path("status").path("phase").asText()).isEqualTo("Terminated");
      assertThat(fx.node("node-a").path("spec").path("unschedulable").asBoolean()).isTrue();
      return o;
    }));
    // --- DELETE
    rows.add(row("DELETE with stale preconditions.resourceVersion", 409, "Conflict", fx -> {
      lockNode(fx, null);
      Outcome o = typed(200, () -> fx.api.deleteNode("node-a")
          .body(new V1DeleteOptions().preconditions(new V1Preconditions().resourceVersion("1"))).execute());
      assertThat(o.body().path("message").asText()).contains("Precondition failed: ResourceVersion in precondition: 1");
      assertThat(fx.emu.get("nodes", null, "node-a")).isPresent();
      return o;
    }));
    rows.add(row("DELETE with wrong preconditions.uid", 409, "Conflict", fx -> {
      lockNode(fx, null);
      return typed(200, () -> fx.api.deleteNode("node-a")
          .body(new V1DeleteOptions().preconditions(new V1Preconditions().uid("nope"))).execute());
    }));
    rows.add(row("DELETE Node answers Status Success", 200, "", fx -> {
      lockNode(fx, null);
      String uid = fx.node("node-a").path("metadata").path("uid").asText();
      Outcome o = fx.raw("DELETE", "/api/v1/nodes/node-a", null, null);
      assertThat(o.body().path("kind").asText()).isEqualTo("Status");
      assertThat(o.body().path("status").asText()).isEqualTo("Success");
      assertThat(o.body().path("details").path("uid").asText()).isEqualTo(uid);
      assertThat(fx.emu.get("nodes", null, "node-a")).isEmpty();
      return o;
    }));
    rows.add(row("DELETE Pod answers the Pod", 200, "", fx -> {
      fx.emu.createPod("default", "p", Map.of());
      V1Pod p = fx.api.deleteNamespacedPod("p", "default").execute();
      assertThat(p.getMetadata().getName()).isEqualTo("p");
      assertThat(fx.emu.get("pods", "default", "p")).isEmpty();
      return new Outcome(200, "", null);
    }));
    rows.add(row("DELETE with finalizers sets deletionTimestamp and keeps the object", 200, "", fx -> {
      fx.emu.create(Map.of("apiVersion", "v1", "kind", "ConfigMap",
          "metadata", Map.of("name", "c", "namespace", "default", "finalizers", List.of("x/y"))));
      Outcome o = fx.raw("DELETE", "/api/v1/namespaces/default/configmaps/c", null, null);
      assertThat(o.body().path("metadata").path("deletionTimestamp").asText()).isNotEmpty();
      assertThat(fx.emu.get("configmaps", "default", "c")).isPresent();
      fx.raw("PATCH", "/api/v1/namespaces/default/configmaps/c", MERGE, "{\"metadata\":{\"finalizers\":null}}");
      assertThat(fx.emu.get("configmaps", "default", "c")).isEmpty();
      return o;
    }));
    rows.add(row("POST pod into a missing namespace", 404, "NotFound", fx -> {
      V1Pod p = new V1Pod().metadata(new V1ObjectMeta().name("p").namespace("nope"));
      Outcome o = typed(201, () -> fx.api.createNamespacedPod("nope", p).execute());
      assertThat(o.body().path("message").asText()).isEqualTo("namespaces \"nope\" not found");
      return o;
    }));
    // --- watch
    rows.add(row("WATCH ?watch=true via Watch.createWatch: event after patch", 200, "", fx -> {
      lockNode(fx, null);
      String rv = fx.rv("node-a");
      ApiClient wc = fx.emu.watchApiClient();
      Call call = new io.kubernetes.client.openapi.apis.CoreV1Api(wc).listNode().resourceVersion(rv)
          .watch(true).timeoutSeconds(5).buildCall(null);
      try (Watch<V1Node> w = Watch.createWatch(wc, call, new TypeToken<Watch.Response<V1Node>>() {}.getType())) {
        fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
        Watch.Response<V1Node> ev = w.next();
        assertThat(ev.type).isEqualTo("MODIFIED");
        assertThat(ev.object.getMetadata().getAnnotations()).containsEntry(LOCK, "me");
      }
      return new Outcome(200, "", null);
    }));
    rows.add(row("WATCH resume from resourceVersion replays later events", 200, "", fx -> {
      lockNode(fx, null);
      String rv = fx.rv("node-a");
      fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
      fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"2\"}}}");
      ApiClient wc = fx.emu.watchApiClient();
      Call call = new io.kubernetes.client.openapi.apis.CoreV1Api(wc).listNode().resourceVersion(rv)
          .watch(true).timeoutSeconds(5).buildCall(null);
      try (Watch<V1Node> w = Watch.createWatch(wc, call, new TypeToken<Watch.Response<V1Node>>() {}.getType())) {
        assertThat(w.next().object.getMetadata().getAnnotations()).containsEntry("a", "1");
        assertThat(w.next().object.getMetadata().getAnnotations()).containsEntry("a", "2");
      }
      return new Outcome(200, "", null);
    }));
    rows.add(row("WATCH from a compacted resourceVersion: ERROR 410 Expired", 410, "Expired", fx -> {
      lockNode(fx, null);
      String rv = fx.rv("node-a");
      fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}");
      fx.emu.compact();
      ApiClient wc = fx.emu.watchApiClient();
      Call call = new io.kubernetes.client.openapi.apis.CoreV1Api(wc).listNode().resourceVersion(rv)
          .watch(true).timeoutSeconds(5).buildCall(null);
      try (Watch<V1Node> w = Watch.createWatch(wc, call, new TypeToken<Watch.Response<V1Node>>() {}.getType())) {
        Watch.Response<V1Node> ev = w.next();
        assertThat(ev.type).isEqualTo("ERROR");
        return new Outcome(ev.status.getCode(), ev.status.getReason(), null);
      }
    }));
    rows.add(row("GenericKubernetesApi<V1Node> list and 409 on stale merge-patch", 409, "Conflict", fx -> {
      lockNode(fx, null);
      GenericKubernetesApi<V1Node, V1NodeList> g =
          new GenericKubernetesApi<>(V1Node.class, V1NodeList.class, "", "v1", "nodes", fx.client);
      assertThat(g.list().getObject().getItems()).hasSize(1);
      KubernetesApiResponse<V1Node> r = g.patch("node-a", MERGE,
          new V1Patch("{\"metadata\":{\"resourceVersion\":\"1\"}}"));
      return new Outcome(r.getHttpStatusCode(), r.getStatus().getReason(), null);
    }));
    rows.add(row("DynamicKubernetesApi tolerates injected unknown fields", 200, "", fx -> {
      lockNode(fx, "me");
      fx.emu.setInjectUnknownFields(true);
      DynamicKubernetesApi d = new DynamicKubernetesApi("", "v1", "nodes", fx.client);
      KubernetesApiResponse<DynamicKubernetesObject> r = d.get("node-a");
      assertThat(r.getObject().getMetadata().getAnnotations()).containsEntry(LOCK, "me");
      assertThatThrownBy(() -> fx.api.readNode("node-a").execute())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(ApiServerEmulator.UNKNOWN_FIELD);
      return new Outcome(r.getHttpStatusCode(), "", null);
    }));
    rows.add(row("PodGroup (scheduling.x-k8s.io/v1alpha1) create+get via DynamicKubernetesApi", 201, "", fx -> {
      DynamicKubernetesApi d = new DynamicKubernetesApi("scheduling.x-k8s.io", "v1alpha1", "podgroups", fx.client);
      DynamicKubernetesObject pg = new DynamicKubernetesObject(com.google.gson.JsonParser.parseString(
          "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"pg\","
              + "\"namespace\":\"default\"},\"spec\":{\"minMember\":2},\"status\":{\"phase\":\"Running\"}}")
          .getAsJsonObject());
      KubernetesApiResponse<DynamicKubernetesObject> r = d.create(pg);
      JsonNode stored = fx.emu.get("podgroups", "default", "pg").orElseThrow();
      assertThat(stored.path("spec").path("minMember").asInt()).isEqualTo(2);
      assertThat(stored.has("status")).as("status is dropped on create (status subresource)").isFalse();
      assertThat(stored.path("metadata").path("generation").asInt()).isEqualTo(1);
      assertThat(r.isSuccess()).isTrue();
      assertThat(d.get("default", "pg").getObject().getMetadata().getName()).isEqualTo("pg");
      // GenericKubernetesApi reports 200 for any success; read the real status code raw
      return fx.raw("POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
          "application/json", "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
              + "\"metadata\":{\"name\":\"pg2\"},\"spec\":{\"minMember\":1}}");
    }));
    // --- binding
    rows.add(row("POST pods/{p}/binding via createNamespacedPodBinding: client throws, pod bound", 201, "", fx -> {
      fx.emu.createPod("default", "p1", Map.of());
      V1Binding b = new V1Binding().metadata(new V1ObjectMeta().name("p1"))
          .target(new V1ObjectReference().kind("Node").name("node-a"));
      assertThatThrownBy(() -> fx.api.createNamespacedPodBinding("p1", "default", b).execute())
          .isInstanceOf(IllegalArgumentException.class);
      JsonNode pod = fx.emu.get("pods", "default", "p1").orElseThrow();
      assertThat(pod.path("spec").path("nodeName").asText()).isEqualTo("node-a");
      assertThat(pod.path("status").path("conditions").get(0).path("type").asText()).isEqualTo("PodScheduled");
      return new Outcome(201, "", null);
    }));
    rows.add(row("binding via raw buildCall + execute(V1Status): 201 then 409 already assigned", 409, "Conflict", fx -> {
      fx.emu.createPod("default", "p1", Map.of());
      V1Binding b = new V1Binding().metadata(new V1ObjectMeta().name("p1").putAnnotationsItem("hami.io/x", "y"))
          .target(new V1ObjectReference().kind("Node").name("node-a"));
      V1Status s = bind(fx.client, b).getData();
      assertThat(s.getStatus()).isEqualTo("Success");
      assertThat(s.getCode()).isEqualTo(201);
      assertThat(fx.emu.get("pods", "default", "p1").orElseThrow().path("metadata").path("annotations")
          .path("hami.io/x").asText()).isEqualTo("y");
      b.getTarget().setName("node-b");
      try {
        bind(fx.client, b);
        throw new AssertionError("second binding succeeded");
      } catch (ApiException e) {
        Outcome o = Outcome.of(e);
        assertThat(o.body().path("message").asText()).isEqualTo(
            "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is already assigned to node \"node-a\"");
        return o;
      }
    }));
    // --- misc
    rows.add(row("/version via VersionApi", 200, "", fx -> {
      assertThat(new VersionApi(fx.client).getCode().execute().getMajor()).isEqualTo("1");
      return new Outcome(200, "", null);
    }));
    rows.add(row("fault injection: 2x500 then success on the 3rd attempt", 200, "", fx -> {
      lockNode(fx, null);
      FaultHandle h = fx.emu.addFault(FaultRule.matching().verb("patch").resource("nodes").times(2)
          .respondStatus(500, "InternalError", "injected"));
      Outcome last = null;
      for (int i = 0; i < 3; i++) {
        last = fx.patchNode("node-a", MERGE, "{\"metadata\":{\"annotations\":{\"" + LOCK + "\":\"me\"}}}");
        if (i < 2) {
          assertThat(last.code()).isEqualTo(500);
        }
      }
      assertThat(h.hits()).isEqualTo(2);
      assertThat(fx.ann("node-a", LOCK)).isEqualTo("me");
      return last;
    }));
    rows.add(row("pod spec.nodeName cannot be changed by patch", 422, "Invalid", fx -> {
      fx.emu.createPod("default", "p", Map.of());
      return fx.patchPod("default", "p", MERGE, "{\"spec\":{\"nodeName\":\"node-a\"}}");
    }));
    return rows.stream();
  }

  private static io.kubernetes.client.openapi.ApiResponse<V1Status> bind(ApiClient c, V1Binding b)
      throws ApiException {
    Call call = c.buildCall(c.getBasePath(), "/api/v1/namespaces/default/pods/p1/binding", "POST",
        new ArrayList<Pair>(), new ArrayList<Pair>(), b,
        new HashMap<>(Map.of("Content-Type", "application/json", "Accept", "application/json")),
        new HashMap<>(), new HashMap<>(), new String[0], null);
    return c.execute(call, V1Status.class);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void behavesLikeKubeApiserver(Row row) throws Exception {
    try (Fx fx = new Fx()) {
      Outcome o = row.probe().run(fx);
      assertThat(o.code()).as("%s: HTTP status (body %s)", row.operation(), o.body()).isEqualTo(row.code());
      if (!row.reason().isEmpty()) {
        assertThat(o.reason()).as("%s: Status reason", row.operation()).isEqualTo(row.reason());
      }
    }
  }
}
