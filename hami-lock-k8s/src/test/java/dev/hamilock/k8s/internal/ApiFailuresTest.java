package dev.hamilock.k8s.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.LockBackendException;
import io.kubernetes.client.openapi.ApiException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ApiFailuresTest {

  final ApiFailures failures =
      new ApiFailures(3, Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofSeconds(2));

  @Test
  void retryAfterIsHonouredAndCapped() {
    assertThat(failures.retryAfter(new ApiException(429, Map.of("Retry-After", List.of("1")), "")))
        .contains(Duration.ofSeconds(1));
    assertThat(
            failures.retryAfter(new ApiException(429, Map.of("retry-after", List.of("120")), "")))
        .contains(Duration.ofSeconds(2));
    assertThat(
            failures.retryAfter(
                new ApiException(
                    429, Map.of("Retry-After", List.of("Wed, 21 Oct 2026 07:28:00 GMT")), "")))
        .isEmpty();
    assertThat(failures.retryAfter(new ApiException(500, Map.of("Retry-After", List.of("1")), "")))
        .isEmpty();
  }

  @Test
  void classificationMapsCodesToKinds() {
    assertThat(
            ApiFailures.toBackend(
                    new ApiException(404, "nf"), "x", LockBackendException.Kind.NOT_FOUND)
                .kind())
        .isEqualTo(LockBackendException.Kind.NOT_FOUND);
    assertThat(
            ApiFailures.toBackend(
                    new ApiException(new SocketTimeoutException("timeout")),
                    "x",
                    LockBackendException.Kind.NOT_FOUND)
                .kind())
        .isEqualTo(LockBackendException.Kind.UNAVAILABLE);
    assertThat(
            ApiFailures.toBackend(
                    new ApiException(503, "x"), "x", LockBackendException.Kind.REJECTED)
                .kind())
        .isEqualTo(LockBackendException.Kind.UNAVAILABLE);
    assertThat(
            ApiFailures.toBackend(
                    new ApiException(403, "x"), "x", LockBackendException.Kind.REJECTED)
                .kind())
        .isEqualTo(LockBackendException.Kind.REJECTED);
  }

  @Test
  void readsRetryTransientFailuresOnly() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    assertThat(
            failures.read(
                () -> {
                  if (calls.incrementAndGet() < 3) {
                    throw new ApiException(500, "boom");
                  }
                  return "ok";
                }))
        .isEqualTo("ok");
    assertThat(calls.get()).isEqualTo(3);
    calls.set(0);
    try {
      failures.read(
          () -> {
            calls.incrementAndGet();
            throw new ApiException(403, "no");
          });
    } catch (ApiException e) {
      assertThat(e.getCode()).isEqualTo(403);
    }
    assertThat(calls.get()).isEqualTo(1);
  }
}
