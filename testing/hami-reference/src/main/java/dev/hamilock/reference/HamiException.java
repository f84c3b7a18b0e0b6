package dev.hamilock.reference;

/**
 * An error raised by the HAMi reference algorithms, carrying HAMi's own Go error text as its
 * message (for example {@code malformed lock annotation: expected 3 parts, got 2 from a,b} or
 * {@code failed to set node lock (node=n1, retry strategy=...): <cause>}).
 *
 * <p>Go wraps errors with {@code %w}; the Java analogue is the cause chain. Wrapped causes are
 * either other {@code HamiException}s or client-java {@link
 * io.kubernetes.client.openapi.ApiException}s. Use {@link
 * HamiLockContentionException#isContention(Throwable)} to test for HAMi's {@code
 * ErrNodeLockContention} sentinel through any wrapping (Go's {@code errors.Is}).
 *
 * <p>Follows the error texts of {@code pkg/util/nodelock/nodelock.go}, {@code
 * pkg/scheduler/scheduler.go} and {@code pkg/util/util.go} (spec §1.13).
 */
public class HamiException extends Exception {
  private static final long serialVersionUID = 1L;

  /**
   * @param message HAMi's Go error text
   */
  public HamiException(String message) {
    super(message);
  }

  /**
   * @param message HAMi's Go error text, already including the cause's text when Go's format did
   *     ({@code "...: %w"})
   * @param cause the wrapped error
   */
  public HamiException(String message, Throwable cause) {
    super(message, cause);
  }
}
