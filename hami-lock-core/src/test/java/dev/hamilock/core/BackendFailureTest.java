package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.BackendFailure.Answer;
import dev.hamilock.core.BackendFailure.Kind;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class BackendFailureTest {

  @Test
  void aStatusOutsideHttpRangeIsRefusedNamingIt() {
    assertThatThrownBy(() -> new Answer(Kind.REJECTED, OptionalInt.of(99)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("httpStatus must be 100..599: 99");
    assertThatThrownBy(
            () -> new LockBackendException(Kind.REJECTED, "x", null, OptionalInt.of(600)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("600");
    assertThatThrownBy(() -> new Answer(null, OptionalInt.empty()))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("kind");
  }

  @Test
  void onlyUnavailableAndConflictAreRetryable() {
    for (Kind kind : Kind.values()) {
      LockBackendException e = new LockBackendException(kind, "GET node n1", null);
      assertThat(e.isRetryable())
          .as(kind.name())
          .isEqualTo(kind == Kind.UNAVAILABLE || kind == Kind.CONFLICT);
      assertThat(e.httpStatus()).isEmpty();
    }
    assertThat(new LockBackendException(Kind.NOT_FOUND, "x", null, OptionalInt.of(404)).answer())
        .isEqualTo(new Answer(Kind.NOT_FOUND, OptionalInt.of(404)));
    assertThat(Kind.NODE_NOT_FOUND).isSameAs(Kind.NOT_FOUND);
  }
}
