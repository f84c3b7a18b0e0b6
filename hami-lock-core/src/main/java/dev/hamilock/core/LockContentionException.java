package dev.hamilock.core;

import java.time.Duration;
import java.util.Optional;

/**
 * Another owner holds the node lock: HAMi's {@code ErrNodeLockContention} ({@code
 * pkg/util/nodelock/nodelock.go}), whose text every message ends with; the only error the acquire
 * loop retries.
 */
public class LockContentionException extends NodeLockException {

  private static final long serialVersionUID = 1L;

  /** The text HAMi's contention sentinel prints: {@value}. */
  public static final String CONTENTION_SUFFIX = "node lock contention";

  private final String node;
  private final String key;
  private final String holderValue;
  private final transient LockRecord holder;
  private final Duration age;

  /**
   * @param message the message; {@code ": node lock contention"} is appended
   * @param age the holder's stamp age (malformed value: since first seen), if known
   */
  public LockContentionException(
      String message,
      String node,
      String key,
      Optional<String> holderValue,
      Optional<LockRecord> holder,
      Optional<Duration> age,
      Throwable cause) {
    super(message + ": " + CONTENTION_SUFFIX, cause);
    this.node = node;
    this.key = key;
    this.holderValue = holderValue.orElse(null);
    this.holder = holder.orElse(null);
    this.age = age.orElse(null);
  }

  /** {@return the contended node's name} */
  public String node() {
    return node;
  }

  /** {@return the contended lock key} */
  public String key() {
    return key;
  }

  /** {@return the lock value found on the node, verbatim, if known} */
  public Optional<String> holderValue() {
    return Optional.ofNullable(holderValue);
  }

  /** {@return the parsed holder record; empty if unknown or the value was malformed} */
  public Optional<LockRecord> holder() {
    return Optional.ofNullable(holder);
  }

  /** {@return how long the lock had been held when contention was detected, if known} */
  public Optional<Duration> age() {
    return Optional.ofNullable(age);
  }
}
