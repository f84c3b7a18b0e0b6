package dev.hamilock.fabric8;

import dev.hamilock.core.annotation.AnnotationLockStore;
import dev.hamilock.core.annotation.AnnotationTransport;
import dev.hamilock.fabric8.internal.Fabric8Http;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The Node-annotation lock store on fabric8's {@code KubernetesClient}: core's {@link
 * AnnotationLockStore} (patch bodies, compare-and-set verdicts, retries and witness rules,
 * documented there; the same bytes on the wire as hami-lock-k8s's {@code NodeAnnotationLockStore})
 * over fabric8's own HTTP client ({@code client.getHttpClient()}: its base URL, credentials, TLS
 * and interceptors). This class is only the transport: one {@code PATCH /api/v1/nodes/<node>} with
 * the body as given, one {@code GET} parsed as a map, each with the client's {@code requestTimeout}
 * (default 10 s) as its whole-call timeout. It does not use fabric8's resource DSL: its {@code
 * patch} GETs the node before every PATCH (a second request per lock operation), and its {@code
 * ObjectMeta} initialises {@code annotations} to an empty map, so a node without an annotations map
 * (where a JSON-patch {@code add} fails and a merge patch is needed) could not be told from one
 * with an empty map. Failures: the HTTP status (0 when there was no answer), its {@code
 * Retry-After}, and whether a 422 is a patch that did not apply (its {@code Status} names neither
 * the object nor a field: kube-apiserver's {@code handlers/patch.go}, as hami-lock-k8s's {@code
 * ApiFailures} reads it).
 */
public final class Fabric8LockStore {

  private Fabric8LockStore() {}

  /**
   * @param client a fabric8 client (its base URL, credentials, timeouts); not closed by the store
   * @return core's store builder over this client (5 attempts, no signal, no watched view)
   * @throws NullPointerException if {@code client} is null
   */
  public static AnnotationLockStore.Builder builder(KubernetesClient client) {
    Objects.requireNonNull(client, "client");
    // the store retries itself (5 attempts, 20 ms to 1 s): fabric8 adds no repetitions under it
    return AnnotationLockStore.builder(new Transport(Fabric8Http.repeating(client, 0)))
        .name("Fabric8LockStore[" + client.getMasterUrl() + "]");
  }

  /** fabric8's half: the raw PATCH and GET, failures classified. */
  private record Transport(Fabric8Http.Requests http) implements AnnotationTransport {

    @Override
    public void patch(String node, boolean merge, String body) throws Failure {
      String type = merge ? "application/merge-patch+json" : "application/json-patch+json";
      Fabric8Http.send(http, path(node), b -> b.method("PATCH", type, body));
    }

    @Override
    public NodeAnnotations read(String node) throws Failure {
      Map<String, Object> object = Fabric8Http.sendForObject(http, path(node), b -> b);
      Map<?, ?> meta = object.get("metadata") instanceof Map<?, ?> m ? m : Map.of();
      Map<String, String> annotations = null;
      if (meta.get("annotations") instanceof Map<?, ?> a) {
        annotations = new HashMap<>();
        for (Map.Entry<?, ?> e : a.entrySet()) {
          if (e.getValue() != null) {
            annotations.put(String.valueOf(e.getKey()), String.valueOf(e.getValue()));
          }
        }
      }
      Object rv = meta.get("resourceVersion");
      return new NodeAnnotations(annotations, rv == null ? null : String.valueOf(rv));
    }

    private static String path(String node) {
      return "api/v1/nodes/" + URLEncoder.encode(node, StandardCharsets.UTF_8);
    }
  }
}
