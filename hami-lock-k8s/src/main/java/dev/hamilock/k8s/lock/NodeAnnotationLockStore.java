package dev.hamilock.k8s.lock;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.hamilock.core.annotation.AnnotationLockStore;
import dev.hamilock.core.annotation.AnnotationTransport;
import dev.hamilock.k8s.internal.ApiFailures;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Core's {@link AnnotationLockStore} (rules documented there) over client-java's raw HTTP: one
 * {@code PATCH} or {@code GET} of {@code /api/v1/nodes/<node>}, failures classified by {@link
 * ApiFailures#failure}.
 */
public final class NodeAnnotationLockStore {

  private NodeAnnotationLockStore() {}

  /**
   * @param apiClient the client (base path, credentials)
   * @param requestTimeout whole-call timeout of each request, replacing the client's; positive
   * @return core's store builder over this client (5 attempts, no signal, no watched view)
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code requestTimeout} is not positive
   */
  public static AnnotationLockStore.Builder builder(ApiClient apiClient, Duration requestTimeout) {
    Objects.requireNonNull(apiClient, "apiClient");
    Validation.positive("requestTimeout", requestTimeout);
    return AnnotationLockStore.builder(new Transport(new KubeHttp(apiClient, null, requestTimeout)))
        .name("NodeAnnotationLockStore[requestTimeout=" + requestTimeout + "]");
  }

  /** client-java's half: the raw PATCH and GET, failures classified. */
  private record Transport(KubeHttp http) implements AnnotationTransport {

    @Override
    public void patch(String node, boolean merge, String body) throws Failure {
      try {
        // the answer is not read: a 2xx is written, whatever its body (an unreadable one too)
        http.patchBody(path(node), merge ? KubeHttp.MERGE_PATCH : KubeHttp.JSON_PATCH, body);
      } catch (ApiException e) {
        throw ApiFailures.failure(e);
      }
    }

    @Override
    public NodeAnnotations read(String node) throws Failure {
      JsonObject object;
      try {
        object = http.get(path(node));
      } catch (ApiException e) {
        throw ApiFailures.failure(e);
      }
      JsonObject meta = object.get("metadata") instanceof JsonObject m ? m : new JsonObject();
      Map<String, String> annotations = null;
      if (meta.get("annotations") instanceof JsonObject a) {
        annotations = new HashMap<>();
        for (Map.Entry<String, JsonElement> e : a.entrySet()) {
          JsonElement v = e.getValue();
          if (!v.isJsonNull()) {
            annotations.put(e.getKey(), v.isJsonPrimitive() ? v.getAsString() : v.toString());
          }
        }
      }
      JsonElement rv = meta.get("resourceVersion");
      return new NodeAnnotations(
          annotations, rv != null && rv.isJsonPrimitive() ? rv.getAsString() : null);
    }

    private String path(String node) {
      return "/api/v1/nodes/" + http.escape(node);
    }
  }
}
