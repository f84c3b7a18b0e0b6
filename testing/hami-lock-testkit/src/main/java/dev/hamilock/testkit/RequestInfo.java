package dev.hamilock.testkit;

import java.util.Objects;
import java.util.Optional;

/**
 * What the emulator understood of one HTTP request; passed to {@link FaultRule} matching and to
 * {@link FaultRule.Builder#invoke} hooks.
 *
 * @param method the HTTP method, upper case
 * @param verb the Kubernetes verb (see {@link RequestKey#verb()})
 * @param resource the plural resource with optional {@code /subresource} (see {@link
 *     RequestKey#resource()})
 * @param path the URL path, without the query
 * @param query the raw query string, {@code ""} when absent
 * @param namespace the namespace from the URL, if any
 * @param name the object name from the URL, if any
 */
public record RequestInfo(
    String method,
    String verb,
    String resource,
    String path,
    String query,
    Optional<String> namespace,
    Optional<String> name) {
  /** Validates that no component is null. */
  public RequestInfo {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(verb, "verb");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(query, "query");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }
}
