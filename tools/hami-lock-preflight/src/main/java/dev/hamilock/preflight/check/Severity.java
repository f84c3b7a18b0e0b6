package dev.hamilock.preflight.check;

/**
 * How bad a {@link Finding} is. The preflight command exits 1 when any {@link #ERROR} is found;
 * warnings and notes alone leave the exit code 0.
 */
public enum Severity {
  /**
   * The set-up will not work as intended (start-up failure, gang never scheduled, request dropped).
   */
  ERROR,
  /** Works, but fragile or silently different from what was written. */
  WARNING,
  /** Worth knowing; nothing to fix necessarily. */
  INFO
}
