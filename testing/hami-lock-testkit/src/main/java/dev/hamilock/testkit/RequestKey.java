package dev.hamilock.testkit;

import java.util.Objects;

/**
 * A request-counter key.
 *
 * @param verb the Kubernetes verb ({@code get}, {@code list}, {@code watch}, {@code create}, {@code
 *     update}, {@code patch}, {@code delete}, {@code deletecollection}); for non-resource paths
 *     (discovery, {@code /version}, {@code /healthz}) the lower-case HTTP method
 * @param resource the plural resource, with a subresource after a slash ({@code nodes}, {@code
 *     pods/binding}, {@code pods/status}); for non-resource paths the URL path
 */
public record RequestKey(String verb, String resource) {
  /** Validates that no component is null. */
  public RequestKey {
    Objects.requireNonNull(verb, "verb");
    Objects.requireNonNull(resource, "resource");
  }

  @Override
  public String toString() {
    return verb + " " + resource;
  }
}
