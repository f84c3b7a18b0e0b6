package dev.hamilock.device.spi.preempt;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.view.PodView;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A pod placed on a node ({@code spec.nodeName}, else {@code hami.io/vgpu-node}), as the planner
 * weighs it.
 *
 * @param priority {@code spec.priority} (0 when unset, kube-scheduler {@code PodPriority})
 * @param startTime {@code status.startTime}, else "now" (kube-scheduler {@code GetPodStartTime})
 * @param gang its pod group, empty for a lone pod: a namespace's gang is evicted whole or not at
 *     all
 */
public record RunningPod(PodView pod, int priority, Instant startTime, Optional<String> gang) {
  /** A blank gang name is no gang. */
  public RunningPod {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(startTime, "startTime");
    gang = Objects.requireNonNull(gang, "gang").filter(g -> !g.isBlank());
  }

  /**
   * The priority ({@link PodView#priority()}) and gang from the pod itself: its {@code
   * spec.schedulingGroup.podGroupName}, else its Coscheduling label {@value
   * HamiAnnotations#POD_GROUP_LABEL} (HAMi {@code IsPodGroupMember}).
   */
  public static RunningPod of(PodView pod, Instant startTime) {
    Optional<String> gang =
        pod.podGroupName()
            .or(() -> Optional.ofNullable(pod.labels().get(HamiAnnotations.POD_GROUP_LABEL)));
    return new RunningPod(pod, pod.priority(), startTime, gang);
  }

  public String key() {
    return pod.key();
  }

  /** The eviction unit: {@code gang:namespace/gang} or the pod's key. */
  String unitKey() {
    return gang.map(g -> "gang:" + pod.namespace() + "/" + g).orElse(key());
  }
}
