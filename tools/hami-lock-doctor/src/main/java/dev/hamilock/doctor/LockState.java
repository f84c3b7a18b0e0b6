package dev.hamilock.doctor;

import java.util.Locale;

/**
 * What the doctor says about one node-lock annotation, from the library's own rules ({@code
 * LockJudgement}).
 */
public enum LockState {
  /** Held by a live owner, younger than the lock timeout. */
  HELD,
  /** Older than the lock timeout; the next bind takes it over. */
  EXPIRED,
  /** Its holder is gone (deleted, terminating, Succeeded, Failed); the next bind takes it over. */
  DANGLING,
  /**
   * Older than the lock timeout while its holder is bound to the node, not Running, with bind-phase
   * not {@code success}/{@code failed}: the device plugin's Allocate has not finished (HAMi#3096);
   * hami-lock does not take it over.
   */
  STUCK_ALLOCATING,
  /**
   * Held (or stuck-allocating) by a pod whose devices of the key's vendor went through DRA ({@code
   * status.extendedResourceClaimStatus}, issue 28): no device plugin Allocate ever releases it.
   */
  DRA_ROUTE,
  /** A timestamp-only or ownerless value (older HAMi): no holder to check. */
  LEGACY,
  /** Not {@code <RFC3339>,<namespace>,<pod>}: HAMi blocks the node forever. */
  MALFORMED;

  /**
   * @return the word used in output: {@code held}, {@code stuck-allocating}, ...
   */
  public String word() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
