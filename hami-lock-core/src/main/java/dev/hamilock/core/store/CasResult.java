package dev.hamilock.core.store;

import java.util.Objects;
import java.util.Optional;

/**
 * The answer of a {@link LockStore} compare-and-set ({@link LockStore#createIfAbsent}, {@link
 * LockStore#replaceIfEquals}): either the value was {@linkplain Written written}, or it was
 * {@linkplain NotWritten not written} and the answer carries the witness, the value the store found
 * instead — as {@link java.util.concurrent.atomic.AtomicReference#compareAndExchange} returns the
 * value it saw, so the caller decides its next step without a separate read.
 *
 * <p>Two cases, not {@code Optional<String>} with "empty = written" nor "witness equals expected ⇒
 * written": a witness read after the refusal may be absent ("not written, nothing there now") or
 * show the expected value again (A-B-A); neither may read as a success.
 */
public sealed interface CasResult permits CasResult.Written, CasResult.NotWritten {

  /** {@return whether the store wrote the value} */
  boolean isWritten();

  /** {@return the answer "written"} */
  static CasResult written() {
    return Written.INSTANCE;
  }

  /**
   * @param witness the value found instead; empty if none was there (by the time the store looked)
   * @return the answer "not written", with its witness
   * @throws NullPointerException if {@code witness} is null
   */
  static CasResult notWritten(Optional<String> witness) {
    return new NotWritten(witness);
  }

  /** {@link #notWritten} with a present witness; {@code NullPointerException} if null. */
  static CasResult found(String witness) {
    return new NotWritten(Optional.of(Objects.requireNonNull(witness, "witness")));
  }

  /** The value was written (created or replaced). */
  record Written() implements CasResult {
    private static final Written INSTANCE = new Written();

    @Override
    public boolean isWritten() {
      return true;
    }
  }

  /**
   * The precondition did not hold and nothing was written.
   *
   * @param witness the value the store found instead: for {@code createIfAbsent} the value present
   *     (empty only when a backend re-read it and it had been removed meanwhile: try again); for
   *     {@code replaceIfEquals} the value present, or empty if none. A backend that cannot see the
   *     value in the refusal itself reads it afterwards (or takes it from a watched view), so it
   *     may lag what refused the write; it is never a guess. That is safe because a caller uses it
   *     only as the precondition of its next compare-and-set or to decide to wait.
   */
  record NotWritten(Optional<String> witness) implements CasResult {

    /** {@code NullPointerException} if {@code witness} is null. */
    public NotWritten {
      Objects.requireNonNull(witness, "witness");
    }

    @Override
    public boolean isWritten() {
      return false;
    }
  }
}
