package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A PodGroup: either scheduler-plugins' {@code scheduling.x-k8s.io} PodGroup (quorum in {@code
 * spec.minMember}; served by the Coscheduling plugin; members carry the label {@code
 * scheduling.x-k8s.io/pod-group}) or the native {@code scheduling.k8s.io} PodGroup of Kubernetes ≥
 * 1.36 (quorum in {@code spec.schedulingPolicy.gang.minCount}; members set {@code
 * spec.schedulingGroup.podGroupName}).
 *
 * @param apiGroup {@link #SCHEDULER_PLUGINS_GROUP} or {@link #NATIVE_GROUP}
 * @param name {@code metadata.name}
 * @param namespace {@code metadata.namespace}, when written
 * @param minMember the quorum, when written as an integer
 * @param minMemberPath path of the quorum field ({@code spec.minMember} or {@code
 *     spec.schedulingPolicy.gang.minCount})
 * @param document the PodGroup document
 */
public record PodGroup(
    String apiGroup,
    String name,
    Optional<String> namespace,
    OptionalInt minMember,
    String minMemberPath,
    ManifestDocument document) {

  /** scheduler-plugins' API group (Coscheduling). */
  public static final String SCHEDULER_PLUGINS_GROUP = "scheduling.x-k8s.io";

  /** Kubernetes' native API group (GangScheduling feature gate). */
  public static final String NATIVE_GROUP = "scheduling.k8s.io";

  /** Validates non-null components. */
  public PodGroup {
    Objects.requireNonNull(apiGroup, "apiGroup");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(minMember, "minMember");
    Objects.requireNonNull(minMemberPath, "minMemberPath");
    Objects.requireNonNull(document, "document");
  }

  /**
   * @return whether this is a scheduler-plugins (Coscheduling) PodGroup
   */
  public boolean isCoscheduling() {
    return SCHEDULER_PLUGINS_GROUP.equals(apiGroup);
  }

  /**
   * @return the location of the quorum field (or of the document when absent)
   */
  public Location minMemberLocation() {
    return document.location(minMemberPath);
  }

  /**
   * @param otherNamespace a member's namespace, when written
   * @return whether a member in {@code otherNamespace} can belong to this group: equal namespaces,
   *     or either left unset (then {@code kubectl -n} decides, assumed equal)
   */
  public boolean sameNamespace(Optional<String> otherNamespace) {
    return namespace.isEmpty() || otherNamespace.isEmpty() || namespace.equals(otherNamespace);
  }
}
