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
 * <p>Why a two-case type and not {@code Optional<String>} with "empty = written": a backend whose
 * write cannot return the stored value (Kubernetes: a failed JSON-patch {@code test} answers 422
 * without it) finds the witness with a read right after the refusal, and by then the value may be
 * gone again. "Not written, nothing there now" is then a true answer that an {@code Optional} could
 * only spell as "written"; and for {@code replaceIfEquals} an absent value is an ordinary witness
 * (released meanwhile). Likewise {@code compareAndExchange}'s "witness equals expected ⇒ written"
 * would turn a read-back that happens to show the expected value again (A-B-A) into a false
 * success. Here "written" is its own case and cannot be confused with any witness.
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

  /**
   * @param witness the value found instead; not null
   * @return the answer "not written", with its witness
   * @throws NullPointerException if {@code witness} is null
   */
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

    /**
     * @throws NullPointerException if {@code witness} is null
     */
    public NotWritten {
      Objects.requireNonNull(witness, "witness");
    }

    @Override
    public boolean isWritten() {
      return false;
    }
  }
}
