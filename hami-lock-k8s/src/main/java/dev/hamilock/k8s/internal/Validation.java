package dev.hamilock.k8s.internal;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Duration and attempt-count checks naming the setting and the bad value (README "Conventions": NPE
 * naming the setting for null, IAE naming the value otherwise). Not part of the public API.
 */
public final class Validation {

  /** Name part of a qualified name: apimachinery {@code qualifiedNameFmt}. */
  private static final Pattern QUALIFIED_NAME =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

  /** apimachinery {@code dns1123SubdomainFmt}. */
  private static final Pattern DNS1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /** The rule of {@link #annotationKey}, quoted in its error message. */
  public static final String ANNOTATION_KEY_RULE =
      "a Kubernetes annotation key is an optional prefix (a DNS-1123 subdomain, lower case"
          + " alphanumerics, '-' and '.', at most 253 characters) and '/', then a name of at most 63"
          + " characters matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

  private Validation() {}

  /**
   * Checks an annotation key as kube-apiserver does ({@code ValidateAnnotations}: apimachinery
   * {@code IsQualifiedName} of the key in lower case): an optional DNS-1123 subdomain prefix of at
   * most 253 characters and {@code /}, then a name of at most 63 characters matching {@code
   * ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]}.
   *
   * @param name setting name
   * @param key value
   * @return {@code key}
   * @throws NullPointerException naming the setting if {@code key} is null
   * @throws IllegalArgumentException naming the setting, the key and the rule if Kubernetes would
   *     refuse it
   */
  public static String annotationKey(String name, String key) {
    Objects.requireNonNull(key, name);
    String lower = key.toLowerCase(Locale.ROOT);
    int slash = lower.indexOf('/');
    String prefix = slash < 0 ? null : lower.substring(0, slash);
    String local = slash < 0 ? lower : lower.substring(slash + 1);
    boolean ok =
        (prefix == null
                || (!prefix.isEmpty()
                    && prefix.length() <= 253
                    && DNS1123_SUBDOMAIN.matcher(prefix).matches()))
            && local.length() <= 63
            && QUALIFIED_NAME.matcher(local).matches();
    checkArgument(
        ok, "%s \"%s\" is not a valid annotation key: %s", name, key, ANNOTATION_KEY_RULE);
    return key;
  }

  /**
   * @param name setting name
   * @param d value
   * @return {@code d}
   * @throws NullPointerException naming the setting if {@code d} is null
   * @throws IllegalArgumentException naming the setting and value if {@code d} is zero or negative
   */
  public static Duration positive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    checkArgument(!d.isZero() && !d.isNegative(), "%s must be positive: %s", name, d);
    return d;
  }

  /**
   * @param name setting name
   * @param d value
   * @return {@code d}
   * @throws NullPointerException naming the setting if {@code d} is null
   * @throws IllegalArgumentException naming the setting and value if {@code d} is negative
   */
  public static Duration notNegative(String name, Duration d) {
    Objects.requireNonNull(d, name);
    checkArgument(!d.isNegative(), "%s must not be negative: %s", name, d);
    return d;
  }

  /**
   * @param name setting name
   * @param n attempts per operation
   * @return {@code n}
   * @throws IllegalArgumentException naming the setting and value if {@code n} is outside 1..100
   */
  public static int attempts(String name, int n) {
    checkArgument(n >= 1 && n <= 100, "%s must be 1..100: %s", name, n);
    return n;
  }
}
