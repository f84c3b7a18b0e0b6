package dev.hamilock.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link Uninterrupted}: clean-up runs with the interrupt flag cleared, which is then restored. */
class UninterruptedTest {

  @AfterEach
  void clearFlag() {
    Thread.interrupted();
  }

  @Test
  void theWorkRunsWithTheFlagClearedAndTheFlagIsRestoredAfterwards() {
    Thread.currentThread().interrupt();

    boolean seenByWork = Uninterrupted.call(() -> Thread.currentThread().isInterrupted());

    assertThat(seenByWork).as("flag during the work").isFalse();
    assertThat(Thread.currentThread().isInterrupted()).as("flag restored").isTrue();
  }

  @Test
  void anUninterruptedThreadStaysUninterruptedAndGetsTheWorksResult() {
    assertThat(Uninterrupted.call(() -> "done")).isEqualTo("done");
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  void theFlagIsRestoredWhenTheWorkThrows() {
    Thread.currentThread().interrupt();

    assertThatThrownBy(
            () ->
                Uninterrupted.call(
                    () -> {
                      throw new IllegalStateException("boom");
                    }))
        .hasMessage("boom");
    assertThat(Thread.currentThread().isInterrupted()).isTrue();
  }
}
