package dev.hamilock.testkit.jsonpatch;

import java.util.Objects;

/**
 * RFC 6901 JSON Pointer token escaping as kube-apiserver's JSON-patch library decodes it.
 *
 * <p>Escaping replaces {@code ~} with {@code ~0} first and then {@code /} with {@code ~1}, so the
 * annotation key {@code hami.io/mutex.lock} becomes {@code hami.io~1mutex.lock}. Decoding follows
 * {@code decodePatchKey} in {@code gopkg.in/evanphx/json-patch.v4} (patch.go): {@code ~1} to {@code
 * /} first, then {@code ~0} to {@code ~}.
 */
public final class JsonPointer {
  private JsonPointer() {}

  /**
   * Escapes one reference token.
   *
   * @param token raw member name, e.g. {@code hami.io/mutex.lock}; not null
   * @return the escaped token, e.g. {@code hami.io~1mutex.lock}
   * @throws NullPointerException if {@code token} is null
   */
  public static String escape(String token) {
    Objects.requireNonNull(token, "token");
    return token.replace("~", "~0").replace("/", "~1");
  }

  /**
   * Decodes one reference token the way evanphx/json-patch v4 does.
   *
   * @param token escaped token; not null
   * @return the raw member name
   * @throws NullPointerException if {@code token} is null
   */
  public static String unescape(String token) {
    Objects.requireNonNull(token, "token");
    return token.replace("~1", "/").replace("~0", "~");
  }

  /**
   * Builds a pointer from raw tokens, e.g. {@code of("metadata", "annotations",
   * "hami.io/mutex.lock")} is {@code /metadata/annotations/hami.io~1mutex.lock}.
   *
   * @param tokens raw member names or array indexes; none null
   * @return the pointer; {@code ""} (the whole document) for no tokens
   */
  public static String of(String... tokens) {
    StringBuilder sb = new StringBuilder();
    for (String t : tokens) {
      sb.append('/').append(escape(t));
    }
    return sb.toString();
  }
}
