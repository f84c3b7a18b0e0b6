package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.ManifestDocument;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A RoleBinding or ClusterRoleBinding.
 *
 * @param kind {@code RoleBinding} or {@code ClusterRoleBinding}
 * @param name {@code metadata.name}
 * @param namespace {@code metadata.namespace} (RoleBindings only), when written
 * @param roleKind {@code roleRef.kind} ({@code Role} or {@code ClusterRole})
 * @param roleName {@code roleRef.name}
 * @param subjects its subjects
 * @param document its document
 */
public record RbacBinding(
    String kind,
    String name,
    Optional<String> namespace,
    String roleKind,
    String roleName,
    List<Subject> subjects,
    ManifestDocument document) {

  /** Copies the list; validates non-null components. */
  public RbacBinding {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(roleKind, "roleKind");
    Objects.requireNonNull(roleName, "roleName");
    subjects = List.copyOf(subjects);
    Objects.requireNonNull(document, "document");
  }

  /**
   * One subject.
   *
   * @param kind {@code ServiceAccount}, {@code User} or {@code Group}
   * @param name its name
   * @param namespace its namespace (ServiceAccounts), when written
   */
  public record Subject(String kind, String name, Optional<String> namespace) {
    /** Validates non-null components. */
    public Subject {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(namespace, "namespace");
    }
  }
}
