package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import java.net.ConnectException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The informers' failure line: one per resource per 30 s of a fake clock, folded count, cause. */
class InformerFailureLogTest {
  private final AtomicLong now = new AtomicLong();
  private final InformerFailureLog log = new InformerFailureLog("http://127.0.0.1:1", now::get);

  private static Throwable refused() {
    return new IllegalStateException(new ConnectException("Failed to connect to /127.0.0.1:1"));
  }

  @Test
  void oneLinePerResourceEveryThirtySecondsCountingTheFoldedFailures() {
    assertThat(log.next("nodes", refused()))
        .isEqualTo(
            "cannot list and watch nodes at http://127.0.0.1:1: ConnectException: Failed to"
                + " connect to /127.0.0.1:1; retrying, next report in 30s at the earliest");
    assertThat(log.next("pods", refused())).as("another resource").isNotNull();
    now.addAndGet(TimeUnit.SECONDS.toNanos(29));
    assertThat(log.next("nodes", refused())).isNull();
    assertThat(log.next("nodes", refused())).isNull();
    now.addAndGet(TimeUnit.SECONDS.toNanos(1));
    assertThat(log.next("nodes", refused())).contains("(2 more failures folded)");
    assertThat(log.next("nodes", refused())).isNull();
  }

  @Test
  void anHttpStatusIsNamedAndOnlyFailuresOtherThanReachingTheServerKeepTheirStack() {
    ApiException forbidden = new ApiException(403, "Forbidden");
    assertThat(InformerFailureLog.describe(new IllegalStateException(forbidden)))
        .isEqualTo("HTTP 403");
    assertThat(InformerFailureLog.unreachable(refused())).isTrue();
    assertThat(InformerFailureLog.unreachable(forbidden)).isTrue();
    assertThat(InformerFailureLog.unreachable(new NullPointerException("bug"))).isFalse();
  }
}
