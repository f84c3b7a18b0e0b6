package dev.hamilock.k8s;

import dev.hamilock.core.GangMembership;
import dev.hamilock.core.LockOwner;
import dev.hamilock.k8s.internal.PodMetadata;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSchedulingGroup;
import java.util.Map;
import java.util.Optional;

/**
 * A client-java {@link V1Pod}'s {@link LockOwner} and gang membership (HAMi's {@code
 * IsPodGroupMember}, {@code pkg/util/util.go}), for {@link KubernetesLockStack} users.
 */
public final class KubernetesLockOwners {

  private KubernetesLockOwners() {}

  /**
   * @param pod a pod with namespace and name
   * @return the lock owner {@code namespace/name}, with {@code metadata.uid} if set
   * @throws NullPointerException if {@code pod} is null
   * @throws IllegalArgumentException naming the field if metadata, namespace or name is missing or
   *     invalid
   */
  public static LockOwner lockOwner(V1Pod pod) {
    V1ObjectMeta meta = PodMetadata.require(pod);
    String uid = meta.getUid();
    return uid == null || uid.isBlank()
        ? LockOwner.of(meta.getNamespace(), meta.getName())
        : LockOwner.of(meta.getNamespace(), meta.getName(), uid);
  }

  /**
   * HAMi's {@code IsPodGroupMember}: label {@code scheduling.x-k8s.io/pod-group} non-empty, or
   * {@code spec.schedulingGroup.podGroupName} non-empty. A null pod is not a member.
   */
  public static boolean isGangMember(V1Pod pod) {
    if (pod == null) {
      return false;
    }
    Map<String, String> labels = pod.getMetadata() == null ? null : pod.getMetadata().getLabels();
    return GangMembership.isMember(labels, podGroupName(pod));
  }

  /** {@code spec.schedulingGroup.podGroupName} (Kubernetes 1.36 GenericWorkload) if non-empty. */
  public static Optional<String> podGroupName(V1Pod pod) {
    if (pod == null || pod.getSpec() == null) {
      return Optional.empty();
    }
    V1PodSchedulingGroup group = pod.getSpec().getSchedulingGroup();
    return group == null
        ? Optional.empty()
        : Optional.ofNullable(group.getPodGroupName()).filter(s -> !s.isEmpty());
  }
}
