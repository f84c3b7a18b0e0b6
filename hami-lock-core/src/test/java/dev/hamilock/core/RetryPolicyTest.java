package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

  @Test
  void defaultsAreHamis() {
    RetryPolicy p = RetryPolicy.defaults();
    assertThat(p.pollInterval()).isEqualTo(Duration.ofMillis(100));
    assertThat(p.retryTimeout()).isEqualTo(Duration.ofSeconds(28));
    assertThat(p.extenderHttpTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(p.retriesEnabled()).isTrue();
  }

  @Test
  void zeroTimeoutDisablesRetries() {
    assertThat(RetryPolicy.failFast().retriesEnabled()).isFalse();
    assertThat(RetryPolicy.builder().retryTimeout("0").build().retriesEnabled()).isFalse();
  }

  @Test
  void retryTimeoutTakesGoDurationText() {
    assertThat(
            RetryPolicy.builder()
                .retryTimeout("1m30s")
                .extenderHttpTimeout(Duration.ofMinutes(2))
                .build()
                .retryTimeout())
        .isEqualTo(Duration.ofSeconds(90));
    assertThatThrownBy(() -> RetryPolicy.builder().retryTimeout("28 s"))
        .isInstanceOf(InvalidGoDurationException.class)
        .hasMessageContaining("28 s");
  }

  @Test
  void retryTimeoutMustStayBelowExtenderTimeoutNamingBothValues() {
    assertThatThrownBy(() -> RetryPolicy.builder().retryTimeout(Duration.ofSeconds(30)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("30s")
        .hasMessageContaining("retry timeout")
        .hasMessageContaining("extender");
    assertThatThrownBy(
            () ->
                RetryPolicy.builder()
                    .retryTimeout(Duration.ofSeconds(6))
                    .extenderHttpTimeout(Duration.ofSeconds(5))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("6s")
        .hasMessageContaining("5s");
    assertThat(
            RetryPolicy.builder()
                .retryTimeout(Duration.ofSeconds(4))
                .extenderHttpTimeout(Duration.ofSeconds(5))
                .build()
                .retryTimeout())
        .isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void invalidValuesAreRejectedNamingTheArgument() {
    assertThatThrownBy(() -> RetryPolicy.builder().pollInterval(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pollInterval");
    assertThatThrownBy(() -> RetryPolicy.builder().pollInterval(null).build())
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("pollInterval");
    assertThatThrownBy(() -> RetryPolicy.builder().retryTimeout(Duration.ofSeconds(-1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("retryTimeout")
        .hasMessageContaining("-1s");
    assertThatThrownBy(
            () -> RetryPolicy.builder().extenderHttpTimeout(Duration.ofSeconds(-5)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("extenderHttpTimeout");
  }

  @Test
  void watchedPollIntervalDefaultsToOneSecondOrThePollIntervalIfLonger() {
    assertThat(RetryPolicy.defaults().watchedPollInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(RetryPolicy.failFast().watchedPollInterval())
        .isEqualTo(RetryPolicy.DEFAULT_WATCHED_POLL_INTERVAL);
    assertThat(
            RetryPolicy.builder().pollInterval(Duration.ofSeconds(3)).build().watchedPollInterval())
        .isEqualTo(Duration.ofSeconds(3));
    assertThat(
            RetryPolicy.builder()
                .watchedPollInterval(Duration.ofSeconds(5))
                .build()
                .watchedPollInterval())
        .isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void watchedPollIntervalMustNotBeShorterThanThePollIntervalNamingBoth() {
    assertThatThrownBy(
            () ->
                RetryPolicy.builder()
                    .pollInterval(Duration.ofMillis(200))
                    .watchedPollInterval(Duration.ofMillis(150))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("watchedPollInterval")
        .hasMessageContaining("150ms")
        .hasMessageContaining("200ms");
    assertThatThrownBy(
            () ->
                new RetryPolicy(
                    Duration.ofMillis(100),
                    Duration.ofSeconds(1),
                    Duration.ofSeconds(30),
                    null,
                    Duration.ofSeconds(1)))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("watchedPollInterval");
    assertThat(
            RetryPolicy.builder()
                .watchedPollInterval(Duration.ofMillis(100))
                .build()
                .watchedPollInterval())
        .isEqualTo(Duration.ofMillis(100));
  }
}
