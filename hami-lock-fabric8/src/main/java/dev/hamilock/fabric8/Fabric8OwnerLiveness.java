package dev.hamilock.fabric8;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Objects;

/**
 * {@link OwnerLiveness} from the holder's Pod through fabric8: one {@code GET
 * /api/v1/namespaces/<ns>/pods/<name>}; absent, or present with another UID than the lock value
 * names ⇒ {@link State#NOT_FOUND}; otherwise core's {@link HolderStatus#ofPod} verdict (the same as
 * hami-lock-k8s's {@code PodOwnerLiveness}). Failures ⇒ {@link LockBackendException} with the kind
 * of core's mapping (transient ⇒ {@code UNAVAILABLE}, else {@code REJECTED}). Thread-safe.
 */
public final class Fabric8OwnerLiveness implements OwnerLiveness {

  private final KubernetesClient client;

  private Fabric8OwnerLiveness(KubernetesClient client) {
    this.client = client;
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
    Pod pod;
    try {
      pod = client.pods().inNamespace(owner.namespace()).withName(owner.name()).get();
    } catch (KubernetesClientException e) {
      throw Fabric8LockStore.failure(e)
          .toBackend("GET pod " + owner, LockBackendException.Kind.REJECTED);
    }
    if (pod == null) {
      return HolderStatus.of(State.NOT_FOUND);
    }
    ObjectMeta meta = pod.getMetadata() == null ? new ObjectMeta() : pod.getMetadata();
    return HolderStatus.ofPod(
        owner,
        meta.getUid(),
        pod.getStatus() == null ? null : pod.getStatus().getPhase(),
        pod.getSpec() == null ? null : pod.getSpec().getNodeName(),
        meta.getAnnotations() == null ? null : meta.getAnnotations().get(BindPhase.ANNOTATION),
        meta.getDeletionTimestamp() != null);
  }

  @Override
  public String toString() {
    return "Fabric8OwnerLiveness[" + client.getMasterUrl() + "]";
  }
}
