package dev.hamilock.device.spi;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Mutable counter of per-card failure reasons for one container fit, formatted as HAMi does ({@code
 * pkg/device/common/common.go}): each reason as {@code <count>/<cards> <Reason>}, the list sorted
 * as strings and joined by {@code ", "}, e.g. {@code 1/2 CardInsufficientMemory, 1/2
 * CardNotHealth}. Not thread-safe.
 */
public final class FitReasons {
  private final EnumMap<FitReason, Integer> counts = new EnumMap<>(FitReason.class);

  /** Adds {@code n} (&ge; 0) cards failing for {@code reason}. */
  public FitReasons add(FitReason reason, int n) {
    if (n > 0) {
      counts.merge(reason, n, Integer::sum);
    }
    return this;
  }

  public FitReasons add(FitReason reason) {
    return add(reason, 1);
  }

  public boolean isEmpty() {
    return counts.isEmpty();
  }

  /** HAMi's text for the {@code cards} the fit examined (its device list length); "" if empty. */
  public String format(int cards) {
    List<String> parts = new ArrayList<>(counts.size());
    for (Map.Entry<FitReason, Integer> e : counts.entrySet()) {
      parts.add(e.getValue() + "/" + cards + " " + e.getKey().word());
    }
    parts.sort(null);
    return String.join(", ", parts);
  }
}
