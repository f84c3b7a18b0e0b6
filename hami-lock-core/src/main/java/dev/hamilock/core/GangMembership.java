package dev.hamilock.core;

import java.util.Map;
import java.util.Optional;

/**
 * Which pods are gang (PodGroup) members and therefore wait for a contended node lock instead of
 * failing fast: HAMi's {@code IsPodGroupMember} ({@code pkg/util/util.go}).
 *
 * <p>A pod is a member iff its <em>label</em> {@value #POD_GROUP_LABEL} has a non-empty value
 * (kubernetes-sigs/scheduler-plugins Coscheduling), or its {@code
 * spec.schedulingGroup.podGroupName} is non-empty (native Kubernetes GenericWorkload, 1.36+). The
 * same key under <em>annotations</em> does not count.
 */
public final class GangMembership {

  /** The Coscheduling PodGroup label: {@value}. */
  public static final String POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group";

  private GangMembership() {}

  /**
   * Whether a pod is a member by its labels and {@code spec.schedulingGroup.podGroupName} (nulls:
   * none).
   */
  public static boolean isMember(
      Map<String, String> labels, Optional<String> schedulingGroupPodGroupName) {
    if (labels != null) {
      String group = labels.get(POD_GROUP_LABEL);
      if (group != null && !group.isEmpty()) {
        return true;
      }
    }
    return schedulingGroupPodGroupName != null
        && schedulingGroupPodGroupName.filter(name -> !name.isEmpty()).isPresent();
  }
}
