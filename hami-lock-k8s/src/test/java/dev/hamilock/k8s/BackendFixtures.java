package dev.hamilock.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.testkit.KubeBackend;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Seeding over a {@link KubeBackend} (the emulator or the real API server): labelled nodes,
 * namespaces whose pods the real server admits, Running owner pods.
 */
public final class BackendFixtures {
    public static final String RUN_LABEL = "hami-lock.test/run";

    private BackendFixtures() {
    }

    /** @return a run id usable as a label value and as a name prefix (fresh per call) */
    public static String runId(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Creates a node labelled {@value #RUN_LABEL}={@code run}, with an annotations map as kubelet nodes have. */
    public static String node(KubeBackend k8s, String name, String run) {
        k8s.create(Map.of("apiVersion", "v1", "kind", "Node", "metadata", Map.of("name", name,
                "labels", Map.of(RUN_LABEL, run), "annotations", Map.of("node.alpha.kubernetes.io/ttl", "0"))));
        return name;
    }

    /**
     * Creates the namespace if missing; on the real server also waits (up to 30 s) for its
     * {@code default} ServiceAccount, without which the ServiceAccount admission plugin refuses pods
     * (the emulator has no such plugin: a difference that cannot matter to the lock).
     */
    public static void namespace(KubeBackend k8s, String ns) {
        if (k8s.get("namespaces", null, ns).isEmpty()) {
            k8s.createNamespace(ns);
        }
        if (k8s.kind() != KubeBackend.Kind.REAL) {
            return;
        }
        CoreV1Api api = new CoreV1Api(k8s.apiClient());
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            try {
                api.readNamespacedServiceAccount("default", ns).execute();
                return;
            } catch (ApiException e) {
                if (e.getCode() != 404 || System.nanoTime() > deadline) {
                    throw new IllegalStateException("no ServiceAccount default in " + ns + ": " + e.getCode(), e);
                }
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Creates a Running pod (a live lock owner), the namespace first if missing. */
    public static JsonNode runningPod(KubeBackend k8s, String ns, String name) {
        namespace(k8s, ns);
        Optional<JsonNode> existing = k8s.get("pods", ns, name);
        if (existing.isPresent()) {
            return existing.get();
        }
        return k8s.create(Map.of("apiVersion", "v1", "kind", "Pod",
                "metadata", Map.of("name", name, "namespace", ns),
                "spec", Map.of("containers", List.of(Map.of("name", "main", "image", "busybox"))),
                "status", Map.of("phase", "Running")));
    }

    /** @return the node's lock annotation as stored now */
    public static Optional<String> lock(KubeBackend k8s, String node) {
        return k8s.get("nodes", null, node).map(n -> n.path("metadata").path("annotations").path(Cluster.KEY))
                .filter(v -> !v.isMissingNode() && !v.isNull()).map(JsonNode::asText);
    }

    /** @return the node's resourceVersion as stored now */
    public static long resourceVersion(KubeBackend k8s, String node) {
        return k8s.get("nodes", null, node).orElseThrow().path("metadata").path("resourceVersion").asLong();
    }
}
