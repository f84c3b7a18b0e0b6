package dev.hamilock.device.spi.view;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The parts of a Kubernetes Pod the device layer reads, independent of any Kubernetes client.
 *
 * @param uid {@code metadata.uid} ("" when not yet assigned)
 * @param podGroupName {@code spec.schedulingGroup.podGroupName} (Kubernetes &ge; 1.36 gang
 *     scheduling), empty when unset or blank
 * @param deleting whether {@code metadata.deletionTimestamp} is set (terminating)
 * @param nodeName {@code spec.nodeName}, empty while unbound
 * @param draResources extended resources given through DRA ({@code
 *     status.extendedResourceClaimStatus.requestMappings[].resourceName})
 * @param resourceClaimNames the names of the ResourceClaims, in the pod's namespace, the pod uses
 *     (core/v1 {@code types.go}): {@code spec.resourceClaims[].resourceClaimName} ({@code
 *     PodResourceClaim}, a claim named directly), {@code
 *     status.resourceClaimStatuses[].resourceClaimName} ({@code PodResourceClaimStatus}, a claim
 *     generated from a template) and {@code status.extendedResourceClaimStatus.resourceClaimName}
 *     ({@code PodExtendedResourceClaimStatus}, the claim kube-scheduler creates for extended
 *     resources backed by DRA); unset ones are not included, immutable
 * @param priority {@code spec.priority}, 0 when unset (kube-scheduler's {@code
 *     corev1helpers.PodPriority})
 * @param preemptionPolicy {@code spec.preemptionPolicy}, {@code PreemptLowerPriority} when unset or
 *     "" (the core/v1 default)
 * @param unschedulable whether the {@code PodScheduled} condition is {@code False}/{@code
 *     Unschedulable} ({@code schedule_one.go} handleSchedulingFailure)
 */
public record PodView(
    String namespace,
    String name,
    String uid,
    Map<String, String> labels,
    Map<String, String> annotations,
    Optional<String> podGroupName,
    Phase phase,
    boolean deleting,
    List<ContainerView> initContainers,
    List<ContainerView> containers,
    Optional<String> nodeName,
    Set<String> draResources,
    Set<String> resourceClaimNames,
    int priority,
    String preemptionPolicy,
    boolean unschedulable) {

  public enum Phase {
    /** Accepted, not all containers running yet (also used when the phase is empty). */
    PENDING,
    /** Bound and at least one container running. */
    RUNNING,
    /** All containers terminated successfully: HAMi frees its device usage. */
    SUCCEEDED,
    /** All containers terminated, at least one failed: HAMi frees its device usage. */
    FAILED,
    /** State could not be obtained. */
    UNKNOWN;

    /** Maps Kubernetes' text; null or "" is PENDING, unrecognised text UNKNOWN. */
    public static Phase fromKubernetes(String text) {
      return switch (text == null ? "" : text) {
        case "", "Pending" -> PENDING;
        case "Running" -> RUNNING;
        case "Succeeded" -> SUCCEEDED;
        case "Failed" -> FAILED;
        default -> UNKNOWN;
      };
    }

    /** Whether the pod has terminated for good (Succeeded or Failed). */
    public boolean isFinished() {
      return this == SUCCEEDED || this == FAILED;
    }
  }

  public PodView {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    uid = uid == null ? "" : uid;
    labels = labels == null ? Map.of() : Map.copyOf(labels);
    annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    podGroupName = Objects.requireNonNull(podGroupName, "podGroupName").filter(s -> !s.isEmpty());
    Objects.requireNonNull(phase, "phase");
    initContainers = List.copyOf(Objects.requireNonNull(initContainers, "initContainers"));
    containers = List.copyOf(Objects.requireNonNull(containers, "containers"));
    nodeName = nodeName == null ? Optional.empty() : nodeName.filter(s -> !s.isBlank());
    draResources = draResources == null ? Set.of() : Set.copyOf(draResources);
    resourceClaimNames = resourceClaimNames == null ? Set.of() : Set.copyOf(resourceClaimNames);
    preemptionPolicy =
        preemptionPolicy == null || preemptionPolicy.isEmpty()
            ? "PreemptLowerPriority"
            : preemptionPolicy;
  }

  /** Starts a builder (defaults: no labels/annotations/containers, phase PENDING, not deleting). */
  public static Builder builder(String namespace, String name) {
    return new Builder(namespace, name);
  }

  public Builder toBuilder() {
    Builder b = new Builder(namespace, name);
    b.uid = uid;
    b.labels = labels;
    b.annotations = annotations;
    b.podGroupName = podGroupName;
    b.phase = phase;
    b.deleting = deleting;
    b.initContainers = initContainers;
    b.containers = containers;
    b.nodeName = nodeName;
    b.draResources = draResources;
    b.resourceClaimNames = resourceClaimNames;
    b.priority = priority;
    b.preemptionPolicy = preemptionPolicy;
    b.unschedulable = unschedulable;
    return b;
  }

  /** {@code namespace/name}. */
  public String key() {
    return namespace + "/" + name;
  }

  /** The number of init and regular containers. */
  public int containerCount() {
    return initContainers.size() + containers.size();
  }

  /**
   * One role per container in allocation order (init containers first): an init container is a
   * {@link ContainerRole#SIDECAR} iff {@link ContainerView#isRestartable()}.
   */
  public List<ContainerRole> containerRoles() {
    List<ContainerRole> out = new ArrayList<>(containerCount());
    for (ContainerView c : initContainers) {
      out.add(c.isRestartable() ? ContainerRole.SIDECAR : ContainerRole.INIT);
    }
    containers.forEach(c -> out.add(ContainerRole.APP));
    return List.copyOf(out);
  }

  /** Builder for {@link PodView}; each setter sets its component (null: empty or default). */
  public static final class Builder {
    private final String namespace;
    private final String name;
    private String uid = "";
    private Map<String, String> labels = Map.of();
    private Map<String, String> annotations = Map.of();
    private Optional<String> podGroupName = Optional.empty();
    private Phase phase = Phase.PENDING;
    private boolean deleting;
    private List<ContainerView> initContainers = List.of();
    private List<ContainerView> containers = List.of();
    private Optional<String> nodeName = Optional.empty();
    private Set<String> draResources = Set.of();
    private Set<String> resourceClaimNames = Set.of();
    private int priority;
    private String preemptionPolicy;
    private boolean unschedulable;

    private Builder(String namespace, String name) {
      this.namespace = namespace;
      this.name = name;
    }

    public Builder uid(String v) {
      this.uid = v;
      return this;
    }

    public Builder labels(Map<String, String> v) {
      this.labels = v;
      return this;
    }

    public Builder annotations(Map<String, String> v) {
      this.annotations = v;
      return this;
    }

    public Builder podGroupName(String v) {
      this.podGroupName = Optional.ofNullable(v);
      return this;
    }

    public Builder phase(Phase v) {
      this.phase = v;
      return this;
    }

    public Builder deleting(boolean v) {
      this.deleting = v;
      return this;
    }

    public Builder initContainers(List<ContainerView> v) {
      this.initContainers = v;
      return this;
    }

    public Builder containers(List<ContainerView> v) {
      this.containers = v;
      return this;
    }

    public Builder nodeName(String v) {
      this.nodeName = Optional.ofNullable(v);
      return this;
    }

    public Builder draResources(Set<String> v) {
      this.draResources = v;
      return this;
    }

    public Builder resourceClaimNames(Set<String> v) {
      this.resourceClaimNames = v;
      return this;
    }

    public Builder priority(int v) {
      this.priority = v;
      return this;
    }

    public Builder preemptionPolicy(String v) {
      this.preemptionPolicy = v;
      return this;
    }

    public Builder unschedulable(boolean v) {
      this.unschedulable = v;
      return this;
    }

    public PodView build() {
      return new PodView(
          namespace,
          name,
          uid,
          labels,
          annotations,
          podGroupName,
          phase,
          deleting,
          initContainers,
          containers,
          nodeName,
          draResources,
          resourceClaimNames,
          priority,
          preemptionPolicy,
          unschedulable);
    }
  }
}
