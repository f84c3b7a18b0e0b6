package dev.hamilock.examples.gang.input;

import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.preflight.manifest.ManifestDocument;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The demo's validated input: the Pods to bind, the PodGroups they belong to and the Nodes to bind
 * them to, each with the document it came from.
 *
 * @param sources the files read (or built-in resource labels), in order
 * @param documents every document read (passed to the preflight checks)
 * @param pods the pods, in input order
 * @param podGroups the PodGroups, in input order
 * @param nodes the nodes, in input order
 * @param notes things the loader skipped or assumed (e.g. "ConfigMap x ignored"), for the report
 */
public record DemoInput(
    List<String> sources,
    List<ManifestDocument> documents,
    List<PodEntry> pods,
    List<PodGroupEntry> podGroups,
    List<NodeEntry> nodes,
    List<String> notes) {

  /** Copies. */
  public DemoInput {
    sources = List.copyOf(sources);
    documents = List.copyOf(documents);
    pods = List.copyOf(pods);
    podGroups = List.copyOf(podGroups);
    nodes = List.copyOf(nodes);
    notes = List.copyOf(notes);
  }

  /**
   * @param namespace namespace
   * @param name PodGroup name
   * @return the PodGroup, if the input has it
   */
  public Optional<PodGroupEntry> podGroup(String namespace, String name) {
    return podGroups.stream()
        .filter(g -> g.namespace().equals(namespace) && g.name().equals(name))
        .findFirst();
  }

  /**
   * @param group a PodGroup
   * @return the pods labelled {@code scheduling.x-k8s.io/pod-group: <name>} in its namespace
   */
  public List<PodEntry> members(PodGroupEntry group) {
    return pods.stream()
        .filter(
            p ->
                p.view().namespace().equals(group.namespace())
                    && group.name().equals(p.view().labels().get(PodEntry.POD_GROUP_LABEL)))
        .toList();
  }

  /**
   * A Pod document.
   *
   * @param document where it came from
   * @param object the document as JSON-ready maps (namespace defaulted to {@code default}), for
   *     creating it in the API emulator
   * @param view the pod as the device layer sees it
   */
  public record PodEntry(ManifestDocument document, Map<String, Object> object, PodView view) {
    /** The Coscheduling membership label. */
    public static final String POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group";

    /** Validates. */
    public PodEntry {
      Objects.requireNonNull(document, "document");
      Objects.requireNonNull(object, "object");
      Objects.requireNonNull(view, "view");
    }

    /**
     * @return the PodGroup named by the pod's label, if any (not by an annotation)
     */
    public Optional<String> podGroupLabel() {
      return Optional.ofNullable(view.labels().get(POD_GROUP_LABEL)).filter(s -> !s.isEmpty());
    }
  }

  /**
   * A PodGroup document ({@code scheduling.x-k8s.io/v1alpha1}).
   *
   * @param document where it came from
   * @param object the document as JSON-ready maps
   * @param namespace its namespace
   * @param name its name
   * @param minMember {@code spec.minMember} (0 if absent)
   */
  public record PodGroupEntry(
      ManifestDocument document,
      Map<String, Object> object,
      String namespace,
      String name,
      int minMember) {
    /** Validates. */
    public PodGroupEntry {
      Objects.requireNonNull(document, "document");
      Objects.requireNonNull(object, "object");
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * A Node document.
   *
   * @param document where it came from
   * @param object the document as JSON-ready maps
   * @param view the node as the device layer sees it (registration annotations, allocatable)
   */
  public record NodeEntry(ManifestDocument document, Map<String, Object> object, NodeView view) {
    /** Validates. */
    public NodeEntry {
      Objects.requireNonNull(document, "document");
      Objects.requireNonNull(object, "object");
      Objects.requireNonNull(view, "view");
    }
  }
}
