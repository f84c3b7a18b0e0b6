package dev.hamilock.testkit;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A resource the emulator serves: its group/version, names, scope and the field selectors the real
 * apiserver supports for it (from {@code pkg/registry/core/<type>/strategy.go} {@code
 * ToSelectableFields} and {@code pkg/apis/core/v1/conversion.go}).
 */
record ResourceType(
    String group,
    String version,
    String plural,
    String singular,
    String kind,
    boolean namespaced,
    List<String> shortNames,
    boolean hasStatus,
    boolean customResource,
    Set<String> fieldSelectors,
    String etcdPrefix) {

  static final ResourceType NAMESPACES =
      new ResourceType(
          "",
          "v1",
          "namespaces",
          "namespace",
          "Namespace",
          false,
          List.of("ns"),
          true,
          false,
          Set.of("metadata.name", "status.phase"),
          "namespaces");
  static final ResourceType NODES =
      new ResourceType(
          "",
          "v1",
          "nodes",
          "node",
          "Node",
          false,
          List.of("no"),
          true,
          false,
          Set.of("metadata.name", "spec.unschedulable"),
          "minions");
  static final ResourceType PODS =
      new ResourceType(
          "",
          "v1",
          "pods",
          "pod",
          "Pod",
          true,
          List.of("po"),
          true,
          false,
          Set.of(
              "metadata.name",
              "metadata.namespace",
              "spec.nodeName",
              "spec.restartPolicy",
              "spec.schedulerName",
              "spec.serviceAccountName",
              "spec.hostNetwork",
              "status.phase",
              "status.podIP",
              "status.nominatedNodeName"),
          "pods");
  static final ResourceType CONFIGMAPS =
      new ResourceType(
          "",
          "v1",
          "configmaps",
          "configmap",
          "ConfigMap",
          true,
          List.of("cm"),
          false,
          false,
          Set.of("metadata.name", "metadata.namespace"),
          "configmaps");
  static final ResourceType PODGROUPS =
      new ResourceType(
          "scheduling.x-k8s.io",
          "v1alpha1",
          "podgroups",
          "podgroup",
          "PodGroup",
          true,
          List.of("pg", "pgs"),
          true,
          true,
          Set.of("metadata.name", "metadata.namespace"),
          "scheduling.x-k8s.io/podgroups");

  /** The group of Dynamic Resource Allocation, served only when the emulator is told to. */
  static final String DRA_GROUP = "resource.k8s.io";

  /**
   * Selectable fields from {@code pkg/registry/resource/resourceslice/strategy.go}
   * toSelectableFields (Kubernetes v1.37); no generation, no status.
   */
  static final ResourceType RESOURCESLICES =
      new ResourceType(
          DRA_GROUP,
          "v1",
          "resourceslices",
          "resourceslice",
          "ResourceSlice",
          false,
          List.of(),
          false,
          false,
          Set.of("metadata.name", "spec.nodeName", "spec.driver", "spec.pool.name"),
          "resourceslices");

  /** Status written only through the status subresource ({@code resourceclaim/strategy.go}). */
  static final ResourceType RESOURCECLAIMS =
      new ResourceType(
          DRA_GROUP,
          "v1",
          "resourceclaims",
          "resourceclaim",
          "ResourceClaim",
          true,
          List.of(),
          true,
          false,
          Set.of("metadata.name", "metadata.namespace"),
          "resourceclaims");

  static final ResourceType DEVICECLASSES =
      new ResourceType(
          DRA_GROUP,
          "v1",
          "deviceclasses",
          "deviceclass",
          "DeviceClass",
          false,
          List.of(),
          false,
          false,
          Set.of("metadata.name"),
          "deviceclasses");

  /** Served for the eviction subresource's budget check ({@link Store#checkDisruption}). */
  static final ResourceType PODDISRUPTIONBUDGETS =
      new ResourceType(
          "policy",
          "v1",
          "poddisruptionbudgets",
          "poddisruptionbudget",
          "PodDisruptionBudget",
          true,
          List.of("pdb"),
          true,
          false,
          Set.of("metadata.name", "metadata.namespace"),
          "poddisruptionbudgets");

  static final List<ResourceType> ALL =
      List.of(
          NAMESPACES,
          NODES,
          PODS,
          CONFIGMAPS,
          PODGROUPS,
          PODDISRUPTIONBUDGETS,
          RESOURCESLICES,
          RESOURCECLAIMS,
          DEVICECLASSES);

  /**
   * @return {@code v1} or {@code group/version}
   */
  String apiVersion() {
    return group.isEmpty() ? version : group + "/" + version;
  }

  /**
   * @return the group-qualified resource used in apiserver messages, e.g. {@code
   *     podgroups.scheduling.x-k8s.io}
   */
  String qualifiedResource() {
    return group.isEmpty() ? plural : plural + "." + group;
  }

  /**
   * @return the group-qualified kind used in Invalid messages, e.g. {@code
   *     PodGroup.scheduling.x-k8s.io}
   */
  String qualifiedKind() {
    return group.isEmpty() ? kind : kind + "." + group;
  }

  /** The etcd key the apiserver would use, quoted in precondition failure messages. */
  String storageKey(String namespace, String name) {
    return "/registry/" + etcdPrefix + "/" + (namespaced ? namespace + "/" : "") + name;
  }

  /** Finds a type by plural, singular, kind or short name (case-insensitive). */
  static Optional<ResourceType> lookup(String nameOrKind) {
    String n = nameOrKind.toLowerCase(Locale.ROOT);
    for (ResourceType t : ALL) {
      if (t.plural.equals(n)
          || t.singular.equals(n)
          || t.kind.toLowerCase(Locale.ROOT).equals(n)
          || t.shortNames.contains(n)
          || t.qualifiedResource().equals(n)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }

  static Optional<ResourceType> byPath(String group, String version, String plural) {
    for (ResourceType t : ALL) {
      if (t.group.equals(group) && t.version.equals(version) && t.plural.equals(plural)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }

  static Optional<ResourceType> byKind(String apiVersion, String kind) {
    for (ResourceType t : ALL) {
      if (t.apiVersion().equals(apiVersion) && t.kind.equals(kind)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
