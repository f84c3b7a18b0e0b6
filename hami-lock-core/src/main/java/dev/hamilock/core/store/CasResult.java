package dev.hamilock.core.store;

import java.util.Objects;
import java.util.Optional;

/**
 * The answer of a {@link LockStore} compare-and-set: written, or not written with the witness the
 * store found instead. Two cases, not an {@code Optional}: a witness read after the refusal may be
 * absent or equal the expected value (A-B-A), and neither may read as a success.
 */
public sealed interface CasResult permits CasResult.Written, CasResult.NotWritten {

  /** {@return whether the store wrote the value} */
  boolean isWritten();

  /** {@return the answer "written"} */
  static CasResult written() {
    return Written.INSTANCE;
  }

  /**
   * {@return the answer "not written", with its witness (empty: nothing there when it looked)}
   *
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
   * Nothing was written.
   *
   * @param witness the value the store saw instead (possibly after the refusal), never a guess
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
