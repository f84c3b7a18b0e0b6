package dev.hamilock.testing.generators;

import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;
import org.quicktheories.generators.SourceDSL;

/**
 * The value spaces several modules generate from, defined once: free text, strings over a chosen
 * alphabet, Kubernetes-style names, RFC 3339 seconds and HAMi lock values, GPU cards. Typed objects
 * (owners, records, pods, scenarios) are a {@code map} over these in the module that owns the type;
 * the gang scenarios live in hami-lock-bind-testkit ({@code ScenarioGens}) because their types are
 * bind's and its scenario model's.
 */
public final class Gens {
  /** ASCII lower-case letters. */
  public static final String LOWER = "abcdefghijklmnopqrstuvwxyz";

  /** ASCII upper-case letters. */
  public static final String UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

  /** ASCII letters. */
  public static final String ALPHA = LOWER + UPPER;

  /** ASCII digits. */
  public static final String DIGITS = "0123456789";

  /**
   * Card memory in MiB of real NVIDIA cards: T4/A10-class 16 GB usable, 24 GB, A100 40 GB,
   * A100/H100 80 GB.
   */
  public static final List<Integer> CARD_MEMORY_MIB = List.of(15360, 24576, 40960, 81920);

  /** The model text of each card of {@link #CARD_MEMORY_MIB}, same order. */
  public static final List<String> CARD_TYPES =
      List.of("NVIDIA-Tesla T4", "NVIDIA A10", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3");

  /** First second RFC 3339 can write (year 0000). */
  public static final long RFC3339_MIN_EPOCH_SECOND =
      Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();

  /** Last second RFC 3339 can write (year 9999). */
  public static final long RFC3339_MAX_EPOCH_SECOND =
      Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();

  private Gens() {}

  /**
   * @param alphabet the characters to draw from (each equally likely)
   * @param minLength shortest length
   * @param maxLength longest length
   * @return strings over the alphabet; shrink towards shorter and towards the alphabet's first
   *     character
   */
  public static Gen<String> strings(String alphabet, int minLength, int maxLength) {
    if (alphabet.isEmpty() || minLength < 0 || maxLength < minLength) {
      throw new IllegalArgumentException(
          "bad string generator: \"" + alphabet + "\" " + minLength + ".." + maxLength);
    }
    List<Character> chars = alphabet.chars().mapToObj(c -> (char) c).toList();
    return SourceDSL.lists()
        .of(Generate.pick(chars))
        .ofSizeBetween(minLength, maxLength)
        .map(
            l -> {
              StringBuilder b = new StringBuilder(l.size());
              l.forEach(b::append);
              return b.toString();
            });
  }

  /**
   * @param first first character, inclusive
   * @param last last character, inclusive
   * @return the characters {@code first..last} as an alphabet for {@link #strings}
   */
  public static String range(char first, char last) {
    StringBuilder b = new StringBuilder();
    IntStream.rangeClosed(first, last).forEach(c -> b.append((char) c));
    return b.toString();
  }

  /**
   * Free text as a test's "any string": 0–{@code maxLength} UTF-16 units of Unicode scalar values
   * (supplementary ones as proper surrogate pairs), except noncharacters and private-use
   * characters; one string in four is printable ASCII only, so ASCII-structured inputs are common.
   *
   * @param maxLength longest length in UTF-16 units
   * @return the text
   */
  public static Gen<String> anyText(int maxLength) {
    Gen<Integer> scalar = SourceDSL.integers().between(0, SCALARS - 1).map(Gens::scalar);
    Gen<Integer> ascii = SourceDSL.integers().between(' ', '~');
    Gen<List<Integer>> unicode = SourceDSL.lists().of(scalar).ofSizeBetween(0, maxLength);
    Gen<List<Integer>> printable = SourceDSL.lists().of(ascii).ofSizeBetween(0, maxLength);
    return Generate.frequency(
            org.quicktheories.api.Pair.of(3, unicode), org.quicktheories.api.Pair.of(1, printable))
        .map(
            cps -> {
              StringBuilder b = new StringBuilder();
              for (int cp : cps) {
                if (b.length() + Character.charCount(cp) > maxLength) {
                  break;
                }
                b.appendCodePoint(cp);
              }
              return b.toString();
            });
  }

  // allowed code points, in order: [0, D7FF], [F900, FDCF], [FDF0, FFFD], [10000, EFFFD]
  private static final int[][] SCALAR_RANGES = {
    {0, 0xD7FF}, {0xF900, 0xFDCF}, {0xFDF0, 0xFFFD}, {0x10000, 0xEFFFD}
  };
  private static final int SCALARS =
      java.util.Arrays.stream(SCALAR_RANGES).mapToInt(r -> r[1] - r[0] + 1).sum();

  /**
   * The i-th allowed code point (no surrogates, private use or noncharacters); shrinks towards
   * U+0000.
   */
  private static int scalar(int i) {
    int rest = i;
    for (int[] r : SCALAR_RANGES) {
      int size = r[1] - r[0] + 1;
      if (rest < size) {
        int cp = r[0] + rest;
        return (cp & 0xFFFE) == 0xFFFE ? cp - 2 : cp; // U+xFFFE/U+xFFFF of planes 1-14
      }
      rest -= size;
    }
    throw new IllegalArgumentException("no scalar " + i);
  }

  /**
   * @param minLength shortest
   * @param maxLength longest
   * @return Kubernetes-style names: {@code [a-z0-9.-]}, never blank
   */
  public static Gen<String> names(int minLength, int maxLength) {
    return strings(LOWER + DIGITS + "-.", Math.max(1, minLength), maxLength);
  }

  /**
   * @return whole seconds RFC 3339 can write (years 0000–9999), as HAMi's lock timestamps
   */
  public static Gen<Instant> rfc3339Seconds() {
    return SourceDSL.longs()
        .between(RFC3339_MIN_EPOCH_SECOND, RFC3339_MAX_EPOCH_SECOND)
        .map(s -> Instant.ofEpochSecond(s));
  }

  /**
   * Text shaped like a HAMi lock value or near it: any text up to 40 characters, or up to 8 pieces
   * of lock values (timestamps, offsets, commas, namespace/pod words, fractions, stray separators
   * and case) glued together.
   *
   * @return lock-like text
   */
  public static Gen<String> lockLikeValues() {
    Gen<String> pieces =
        Generate.pick(
            List.of(
                "2026-08-01T06:00:00",
                "Z",
                "+08:00",
                ",",
                "ns",
                "pod",
                ".5",
                "T",
                "-",
                ":",
                "",
                " ",
                "z",
                "99"));
    Gen<String> structured =
        SourceDSL.lists().of(pieces).ofSizeBetween(0, 8).map(l -> String.join("", l));
    return Generate.oneOf(anyText(40), structured);
  }

  /**
   * @return an index into {@link #CARD_MEMORY_MIB} / {@link #CARD_TYPES}
   */
  public static Gen<Integer> cardIndexes() {
    return SourceDSL.integers().between(0, CARD_MEMORY_MIB.size() - 1);
  }

  /**
   * @return a real card's memory in MiB ({@link #CARD_MEMORY_MIB})
   */
  public static Gen<Integer> cardMemoryMiB() {
    return Generate.pick(CARD_MEMORY_MIB);
  }

  /**
   * The container-level {@code restartPolicy} of each of a pod's init containers, in spec order:
   * {@code Always} (a native sidecar, Kubernetes &ge; 1.29) about a third of the time, so sidecars
   * come before, between and after run-to-completion init containers; else "" (absent), {@code
   * Never} or {@code OnFailure} (Kubernetes' ContainerRestartRules), which leave an init container
   * run-to-completion.
   *
   * @param maxInit most init containers (&ge; 0)
   * @return 0 to {@code maxInit} policies
   */
  public static Gen<List<String>> initRestartPolicies(int maxInit) {
    return SourceDSL.lists()
        .of(Generate.pick(List.of("", "", "Always", "Always", "Never", "OnFailure")))
        .ofSizeBetween(0, maxInit);
  }
}
