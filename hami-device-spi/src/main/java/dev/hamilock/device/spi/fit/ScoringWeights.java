package dev.hamilock.device.spi.fit;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Device score weights from {@code hami.io/device-scoring-weights} (HAMi {@code
 * pkg/util/device_scoring_weights.go}, V73): exactly the keys {@code slot}, {@code core}, {@code
 * memory}, non-negative integers, at least one positive; default 1/1/1.
 */
public record ScoringWeights(int slot, int core, int memory) {
  /** HAMi's default weights 1/1/1. */
  public static final ScoringWeights DEFAULT = new ScoringWeights(1, 1, 1);

  /**
   * Parses the annotation value: comma-separated {@code key=value}, blanks ignored.
   *
   * @throws IllegalArgumentException with HAMi's message: {@code expected slot, core, and memory
   *     weights}, {@code expected key=value entries}, {@code "core" weight must be an integer},
   *     {@code "core" weight must not be negative}, {@code unknown weight "bandwidth"}, {@code
   *     duplicate "slot" weight}, {@code at least one weight must be positive}
   */
  public static ScoringWeights parse(String text) {
    Map<String, Integer> w = new HashMap<>();
    for (String raw : text.split(",", -1)) {
      String e = raw.trim();
      if (e.isEmpty()) {
        continue;
      }
      int eq = e.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("expected key=value entries");
      }
      String k = e.substring(0, eq).trim();
      String v = e.substring(eq + 1).trim();
      if (!List.of("slot", "core", "memory").contains(k)) {
        throw new IllegalArgumentException("unknown weight \"" + k + "\"");
      }
      if (w.containsKey(k)) {
        throw new IllegalArgumentException("duplicate \"" + k + "\" weight");
      }
      int n;
      try {
        n = Integer.parseInt(v);
      } catch (NumberFormatException ex) {
        throw new IllegalArgumentException("\"" + k + "\" weight must be an integer");
      }
      if (n < 0) {
        throw new IllegalArgumentException("\"" + k + "\" weight must not be negative");
      }
      w.put(k, n);
    }
    if (w.size() != 3) {
      throw new IllegalArgumentException("expected slot, core, and memory weights");
    }
    if (w.values().stream().allMatch(n -> n == 0)) {
      throw new IllegalArgumentException("at least one weight must be positive");
    }
    return new ScoringWeights(w.get("slot"), w.get("core"), w.get("memory"));
  }
}
