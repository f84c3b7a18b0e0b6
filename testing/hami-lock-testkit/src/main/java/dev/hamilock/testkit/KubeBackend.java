package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kubernetes.client.openapi.ApiClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * A Kubernetes API for tests: the project's {@link ApiServerEmulator} or a real kube-apiserver on
 * etcd ({@link RealApiServer}). Tests written against this interface run unchanged on both (see
 * {@code dev.hamilock.testkit.junit.BackendTest}).
 *
 * <p>The seeding and inspection methods ({@link #create}, {@link #get}, {@link #mutate}, {@link
 * #delete}) are not counted by {@link #requestCounts()} on either backend: the emulator bypasses
 * HTTP for them, the real server subtracts the requests they make.
 *
 * <p>Resources: {@code namespaces}, {@code nodes}, {@code pods}, {@code configmaps} (plural,
 * singular, kind or short name); the emulator also serves {@code podgroups}; the real server and an
 * emulator built with {@code servingDra(true)} serve {@code resourceslices}, {@code resourceclaims}
 * and {@code deviceclasses}.
 */
public interface KubeBackend extends AutoCloseable {

  /** Which implementation a backend is. */
  enum Kind {
    /** {@link ApiServerEmulator}: in-process, fault injection, write history. */
    EMULATOR("emulator"),
    /** {@link RealApiServer}: kube-apiserver and etcd built from their Go modules. */
    REAL("real-apiserver");

    private final String label;

    Kind(String label) {
      this.label = label;
    }

    /**
     * @return the name used in test display names and in {@code -Dhamilock.backends}
     */
    public String label() {
      return label;
    }
  }

  /**
   * @return which implementation this is
   */
  Kind kind();

  /**
   * @return the shared request/response client (finite read timeout)
   */
  ApiClient apiClient();

  /**
   * @return the shared client for watches and informers (no read timeout)
   */
  ApiClient watchApiClient();

  /**
   * @param readTimeout read timeout, {@link Duration#ZERO} for none; not negative
   * @return a new client with its own connection pool, released by {@link #close()}
   */
  ApiClient newApiClient(Duration readTimeout);

  /**
   * @return a kubeconfig file for this backend (for kubectl or a program's --kubeconfig)
   */
  Path kubeconfigFile();

  /**
   * Creates an object, keeping a given {@code status} (written through the status subresource on
   * the real server).
   *
   * @param object a {@link Map}, {@link JsonNode} or JSON {@link String} with apiVersion and kind
   * @throws IllegalArgumentException if the object is not JSON or its kind is not served
   * @throws IllegalStateException if the server rejects it, with the server's code and message
   */
  JsonNode create(Object object);

  /**
   * Creates a node with the given annotations (no labels, no status).
   *
   * @param annotations annotations; may be empty (then the node has no annotations map, like a
   *     fresh test node, which makes JSON-patch {@code add} under it fail with 422)
   */
  default JsonNode createNode(String name, Map<String, String> annotations) {
    return create(
        ordered(
            "apiVersion",
            "v1",
            "kind",
            "Node",
            "metadata",
            ordered("name", name, "annotations", annotations)));
  }

  /**
   * @param namespace namespace; must exist
   * @param annotations annotations; may be empty
   * @return the stored pod (one container {@code main}, image {@code busybox}; status Pending)
   */
  default JsonNode createPod(String namespace, String name, Map<String, String> annotations) {
    return create(
        ordered(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            ordered("name", name, "namespace", namespace, "annotations", annotations),
            "spec",
            Map.of("containers", List.of(Map.of("name", "main", "image", "busybox")))));
  }

  /**
   * @param name namespace to create
   */
  default JsonNode createNamespace(String name) {
    return create(
        ordered("apiVersion", "v1", "kind", "Namespace", "metadata", Map.of("name", name)));
  }

  /**
   * @param resource e.g. {@code nodes}, {@code Pod}
   * @param namespace namespace for namespaced resources; ignored (may be null) otherwise
   * @return the object, or empty if absent
   */
  Optional<JsonNode> get(String resource, String namespace, String name);

  /**
   * @param resource as in {@link #get}
   * @param namespace namespace, or null for all namespaces / cluster-scoped
   */
  List<JsonNode> list(String resource, String namespace);

  /**
   * Changes an object as an unconditional update would (status included).
   *
   * @param resource as in {@link #get}
   * @param namespace namespace for namespaced resources
   * @param mutation gets a private copy of the current object and returns the desired object
   * @return the stored object after the change
   * @throws IllegalStateException if the object does not exist or the result is rejected
   */
  JsonNode mutate(
      String resource, String namespace, String name, UnaryOperator<ObjectNode> mutation);

  /**
   * @param resource as in {@link #get}
   * @param namespace namespace for namespaced resources
   * @return whether the object existed (finalizers are honoured)
   */
  boolean delete(String resource, String namespace, String name);

  /**
   * @param verb Kubernetes verb, lower case: {@code get}, {@code list}, {@code watch}, {@code
   *     create}, {@code update}, {@code patch}, {@code delete}
   * @param resource plural with optional subresource, e.g. {@code nodes}, {@code pods/binding}
   * @return requests since start or the last {@link #resetCounters()}
   */
  default long requestCount(String verb, String resource) {
    return requestCounts().getOrDefault(new RequestKey(verb, resource), 0L);
  }

  /**
   * @return every non-zero request counter since start or the last {@link #resetCounters()}
   */
  Map<RequestKey, Long> requestCounts();

  /**
   * @return the sum of {@link #requestCounts()}
   */
  default long totalRequests() {
    return requestCounts().values().stream().mapToLong(Long::longValue).sum();
  }

  /** Zeroes every request counter. */
  void resetCounters();

  /** Compacts the storage's history: a watch from an older resourceVersion then gets 410 Gone. */
  long compact();

  /** Stops the backend and releases its clients. Idempotent. */
  @Override
  void close();

  /**
   * A map in the given key order: objects are stored (and echoed in the emulator's error messages)
   * in the order they were created with, and {@code Map.of}'s iteration order changes from one JVM
   * to the next, which made CONFORMANCE.md differ between runs.
   *
   * @param keysAndValues key, value, key, value, …
   */
  private static Map<String, Object> ordered(Object... keysAndValues) {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      m.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return m;
  }
}
