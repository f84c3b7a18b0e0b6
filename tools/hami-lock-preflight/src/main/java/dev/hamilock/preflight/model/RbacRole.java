package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.ManifestDocument;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A Role or ClusterRole ({@code rbac.authorization.k8s.io}).
 *
 * @param kind {@code Role} or {@code ClusterRole}
 * @param name {@code metadata.name}
 * @param namespace {@code metadata.namespace} (Roles only), when written
 * @param rules its {@code rules}
 * @param labels its {@code metadata.labels} (matched by aggregating ClusterRoles)
 * @param aggregationSelectors {@code aggregationRule.clusterRoleSelectors[*].matchLabels} ({@code
 *     matchExpressions} are not evaluated)
 * @param document its document
 */
public record RbacRole(
    String kind,
    String name,
    Optional<String> namespace,
    List<Rule> rules,
    Map<String, String> labels,
    List<Map<String, String>> aggregationSelectors,
    ManifestDocument document) {

  /** Copies collections; validates non-null components. */
  public RbacRole {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(namespace, "namespace");
    rules = List.copyOf(rules);
    labels = Map.copyOf(labels);
    aggregationSelectors = aggregationSelectors.stream().map(Map::copyOf).toList();
    Objects.requireNonNull(document, "document");
  }

  /**
   * One policy rule.
   *
   * @param apiGroups {@code apiGroups} ({@code *} matches all)
   * @param resources {@code resources} ({@code *} matches all)
   * @param verbs {@code verbs} ({@code *} matches all)
   * @param resourceNames {@code resourceNames} (non-empty restricts the rule to named objects)
   */
  public record Rule(
      List<String> apiGroups,
      List<String> resources,
      List<String> verbs,
      List<String> resourceNames) {
    /** Copies the lists. */
    public Rule {
      apiGroups = List.copyOf(apiGroups);
      resources = List.copyOf(resources);
      verbs = List.copyOf(verbs);
      resourceNames = List.copyOf(resourceNames);
    }

    /**
     * @param apiGroup an API group
     * @param resource a resource (plural)
     * @param verb a verb
     * @return whether this rule grants the verb on all objects of the resource, honouring {@code *}
     *     wildcards; rules limited by {@code resourceNames} grant nothing here
     */
    public boolean grants(String apiGroup, String resource, String verb) {
      return resourceNames.isEmpty()
          && (apiGroups.contains("*") || apiGroups.contains(apiGroup))
          && (resources.contains("*") || resources.contains(resource))
          && (verbs.contains("*") || verbs.contains(verb));
    }
  }
}
