package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import java.util.Objects;
import java.util.Optional;

/**
 * The pod that holds (or wants) a node lock; only namespace and name travel on the wire, the UID
 * never does. Identity is exact ({@link #isSameOwner}), never HAMi's suffix test (HAMi#1433).
 *
 * @param namespace the pod's namespace; non-blank, no {@code ,}
 * @param name the pod's name; non-blank, no {@code ,}
 * @param uid the pod's {@code metadata.uid} if known; if present, non-blank
 */
public record LockOwner(String namespace, String name, Optional<String> uid) {

  /**
   * @throws NullPointerException naming the argument if namespace, name or uid is null
   * @throws IllegalArgumentException naming the argument and value if namespace or name is blank or
   *     contains {@code ,} (the wire separator), or if uid holds a blank value
   */
  public LockOwner {
    namespace = field("namespace", namespace);
    name = field("name", name);
    Objects.requireNonNull(uid, "uid");
    checkArgument(
        uid.isEmpty() || !uid.get().isBlank(),
        "uid must not be blank when present: \"%s\"",
        uid.orElse(""));
  }

  /** An owner without a UID; arguments and exceptions as {@link #LockOwner}. */
  public static LockOwner of(String namespace, String name) {
    return new LockOwner(namespace, name, Optional.empty());
  }

  /** An owner with a (non-blank) UID; arguments and exceptions as {@link #LockOwner}. */
  public static LockOwner of(String namespace, String name, String uid) {
    Objects.requireNonNull(uid, "uid");
    return new LockOwner(namespace, name, Optional.of(uid));
  }

  /** Whether {@code other} (may be null) has the same namespace, name and, if both known, UID. */
  public boolean isSameOwner(LockOwner other) {
    if (other == null || !namespace.equals(other.namespace) || !name.equals(other.name)) {
      return false;
    }
    return uid.isEmpty() || other.uid.isEmpty() || uid.get().equals(other.uid.get());
  }

  /** {@code namespace + separator + name}, as HAMi's {@code pkg/util/util.go} helpers join them. */
  public String join(String separator) {
    Objects.requireNonNull(separator, "separator");
    return namespace + separator + name;
  }

  /** {@return {@code namespace/name}, plus {@code (uid)} when known} */
  @Override
  public String toString() {
    return namespace + "/" + name + uid.map(u -> " (uid " + u + ")").orElse("");
  }

  private static String field(String argument, String value) {
    requireNonBlank(value, argument);
    checkArgument(
        value.indexOf(',') < 0,
        "%s must not contain ',' (the HAMi lock value separator): \"%s\"",
        argument,
        value);
    return value;
  }
}
