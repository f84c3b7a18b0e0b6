package dev.hamilock.fabric8;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import dev.hamilock.fabric8.internal.Fabric8Http;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;

/**
 * {@link OwnerLiveness} from the holder's Pod through fabric8's HTTP client: one raw {@code GET
 * /api/v1/namespaces/<ns>/pods/<name>} (as hami-lock-k8s's {@code PodOwnerLiveness}), repeated by
 * this module at most 4 times on no answer, 5xx or 429 (the capped Retry-After, else 20 ms to 1 s
 * of back-off), whatever the client's {@code requestRetryBackoffLimit} says: 5 attempts, as
 * client-java's check. 404, or a pod with another UID than the lock value names ⇒ {@link
 * State#NOT_FOUND}; otherwise core's {@link HolderStatus#ofPod} verdict. Failures ⇒ {@link
 * LockBackendException} of core's classification (no answer, 5xx, 429 or an unreadable 2xx ⇒ {@code
 * UNAVAILABLE}, else {@code REJECTED}). Thread-safe.
 */
public final class Fabric8OwnerLiveness implements OwnerLiveness {

  private final Fabric8Http.Requests http;

  private Fabric8OwnerLiveness(KubernetesClient client) {
    this.http = Fabric8Http.repeating(client, 4);
  }

  /**
   * @param client a fabric8 client; not closed by this object
   * @return the liveness check
   * @throws NullPointerException if {@code client} is null
   */
  public static Fabric8OwnerLiveness create(KubernetesClient client) {
    return new Fabric8OwnerLiveness(Objects.requireNonNull(client, "client"));
  }

  @Override
  public State check(LockOwner owner) throws LockBackendException {
    return status(owner).state();
  }

  @Override
  public HolderStatus status(LockOwner owner) throws LockBackendException {
    Objects.requireNonNull(owner, "owner");
    String path =
        "api/v1/namespaces/"
            + URLEncoder.encode(owner.namespace(), StandardCharsets.UTF_8)
            + "/pods/"
            + URLEncoder.encode(owner.name(), StandardCharsets.UTF_8);
    Map<String, Object> pod;
    try {
      pod = Fabric8Http.sendForObject(http, path, b -> b);
    } catch (Failure f) {
      if (f.status() == 404) {
        return HolderStatus.of(State.NOT_FOUND);
      }
      throw f.toBackend("GET pod " + owner, LockBackendException.Kind.REJECTED);
    }
    Map<?, ?> meta = field(pod, "metadata");
    return HolderStatus.ofPod(
        owner,
        text(meta, "uid"),
        text(field(pod, "status"), "phase"),
        text(field(pod, "spec"), "nodeName"),
        text(field(meta, "annotations"), BindPhase.ANNOTATION),
        meta.get("deletionTimestamp") != null);
  }

  private static Map<?, ?> field(Map<?, ?> object, String name) {
    return object.get(name) instanceof Map<?, ?> m ? m : Map.of();
  }

  private static String text(Map<?, ?> object, String name) {
    return object.get(name) instanceof String s ? s : null;
  }

  @Override
  public String toString() {
    return "Fabric8OwnerLiveness[" + http.client().getMasterUrl() + "]";
  }
}
