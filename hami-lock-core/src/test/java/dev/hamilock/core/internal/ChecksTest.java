package dev.hamilock.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The precondition convention (README "Conventions"): NPE for null, IAE naming the bad value. */
class ChecksTest {

  @Test
  void checkArgumentPassesOrNamesTheBadValues() {
    assertThatCode(() -> Checks.checkArgument(true, "never %s", 1)).doesNotThrowAnyException();
    assertThatThrownBy(() -> Checks.checkArgument(false, "attempts must be at least 1: %s", 0L))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("attempts must be at least 1: 0");
    assertThatThrownBy(() -> Checks.checkArgument(false, "max %s is below min %s", "1s", "2s"))
        .hasMessage("max 1s is below min 2s");
  }

  @Test
  void formatIsGuavasLenientOne() {
    assertThat(Checks.format("100% of %s", "a card")).isEqualTo("100% of a card");
    assertThat(Checks.format("%s and %s", "one")).isEqualTo("one and %s");
    assertThat(Checks.format("no slots", 1, "two")).isEqualTo("no slots [1, two]");
  }

  @Test
  void requireNonBlankThrowsNpeForNullAndIaeNamingTheBlankValue() {
    assertThat(Checks.requireNonBlank("node-a", "node")).isEqualTo("node-a");
    assertThatThrownBy(() -> Checks.requireNonBlank(null, "node"))
        .isExactlyInstanceOf(NullPointerException.class)
        .hasMessage("node");
    assertThatThrownBy(() -> Checks.requireNonBlank(" ", "node"))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("node must not be blank: \" \"");
  }
}
