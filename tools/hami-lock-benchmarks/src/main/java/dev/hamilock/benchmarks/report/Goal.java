package dev.hamilock.benchmarks.report;

import java.util.Objects;
import java.util.Optional;

/**
 * One goal of issue 8 and whether this run met it.
 *
 * @param name what is measured, e.g. {@code N = 5: convergence ÷ lower bound}
 * @param target the goal, e.g. {@code ≤ 1.2}
 * @param measured the figure(s) measured, as text
 * @param met whether the goal was met; empty if it could not be measured in this run
 */
public record Goal(String name, String target, String measured, Optional<Boolean> met) {
  /**
   * @throws NullPointerException if a component is null
   */
  public Goal {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(measured, "measured");
    Objects.requireNonNull(met, "met");
  }

  /**
   * @return {@code met}, {@code NOT met} or {@code not measured}
   */
  public String verdict() {
    return met.map(m -> m ? "met" : "NOT met").orElse("not measured");
  }
}
