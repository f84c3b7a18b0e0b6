package dev.hamilock.doctor;

import java.util.List;
import java.util.Optional;

/**
 * What {@code gang NS/PODGROUP} found.
 *
 * @param namespace the PodGroup's namespace
 * @param name the PodGroup's name
 * @param found whether the PodGroup exists
 * @param minMember {@code spec.minMember} (or native {@code minCount}); 0 if unknown
 * @param podGroupPhase {@code status.phase} of the PodGroup, empty if unset
 * @param members members (by label or {@code spec.schedulingGroup}) and pods naming the group only
 *     in an annotation (not members: {@link Member#via()} says so)
 * @param schedulerAccount the scheduler's ServiceAccount the access review asked about
 * @param schedulerMayRead whether it may get, list and watch PodGroups cluster-wide; empty if the
 *     review could not be made
 */
public record GangEntry(
    String namespace,
    String name,
    boolean found,
    int minMember,
    String podGroupPhase,
    List<Member> members,
    String schedulerAccount,
    Optional<Boolean> schedulerMayRead) {

  /** Copies the list. */
  public GangEntry {
    members = List.copyOf(members);
  }

  /**
   * @return how many pods are members (label or schedulingGroup)
   */
  public long memberCount() {
    return members.stream().filter(Member::isMember).count();
  }

  /**
   * One pod of the group.
   *
   * @param name pod name
   * @param via {@code label}, {@code schedulingGroup}, or {@code annotation} (the mistake: not a
   *     member)
   * @param phase {@code status.phase}
   * @param node {@code spec.nodeName}, empty if unbound
   * @param bindPhase {@code hami.io/bind-phase}, empty if absent
   * @param scheduling the PodScheduled condition's reason and message when not scheduled, else
   *     empty
   * @param latestEvent the latest event about the pod ({@code reason: message}), empty if none
   * @param lock the pod's lock situation: holds a lock, or waits for one (from events/conditions),
   *     or empty
   */
  public record Member(
      String name,
      String via,
      String phase,
      String node,
      String bindPhase,
      String scheduling,
      String latestEvent,
      String lock) {

    /**
     * @return whether Coscheduling counts the pod (label or schedulingGroup)
     */
    public boolean isMember() {
      return !via.equals("annotation");
    }
  }
}
