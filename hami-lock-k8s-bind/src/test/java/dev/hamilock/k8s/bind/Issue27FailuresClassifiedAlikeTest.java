package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.BackendFailure.Kind;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.k8s.internal.ApiFailures;
import io.kubernetes.client.openapi.ApiException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * Issue 27 drift: the lock's store ({@link ApiFailures#toBackend}) and the bind flow's cluster
 * ports ({@link KubernetesCluster#failure}) classified client-java failures with two copies of the
 * mapping, which disagreed on a request for another incarnation (409 {@code UID in precondition},
 * 422 on {@code metadata.uid}). One table, both paths, the same kind, status and retryability.
 */
class Issue27FailuresClassifiedAlikeTest {

  private static final String UID_409 =
      "{\"kind\":\"Status\",\"code\":409,\"reason\":\"Conflict\",\"message\":\"Operation cannot be"
          + " fulfilled on pods \\\"p\\\": Precondition failed: UID in precondition: a, UID in"
          + " object meta: b\"}";
  private static final String UID_422 =
      "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\",\"details\":{\"name\":\"p\","
          + "\"causes\":[{\"field\":\"metadata.uid\",\"message\":\"field is immutable\"}]}}";
  private static final String INVALID_422 =
      "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\",\"details\":{\"name\":\"n\","
          + "\"causes\":[{\"field\":\"metadata.annotations\",\"message\":\"Too long\"}]}}";

  record Row(String name, ApiException failure, Kind kind, OptionalInt status) {}

  static List<Row> table() {
    return List.of(
        new Row("404", new ApiException(404, Map.of(), "{}"), Kind.NOT_FOUND, OptionalInt.of(404)),
        new Row("409", new ApiException(409, Map.of(), "{}"), Kind.CONFLICT, OptionalInt.of(409)),
        new Row(
            "409 UID precondition",
            new ApiException(409, Map.of(), UID_409),
            Kind.NOT_FOUND,
            OptionalInt.of(409)),
        new Row(
            "422 validation",
            new ApiException(422, Map.of(), INVALID_422),
            Kind.REJECTED,
            OptionalInt.of(422)),
        new Row(
            "422 metadata.uid",
            new ApiException(422, Map.of(), UID_422),
            Kind.NOT_FOUND,
            OptionalInt.of(422)),
        new Row(
            "429 Retry-After",
            new ApiException(429, Map.of("Retry-After", List.of("1")), "{}"),
            Kind.UNAVAILABLE,
            OptionalInt.of(429)),
        new Row("403", new ApiException(403, Map.of(), "{}"), Kind.REJECTED, OptionalInt.of(403)),
        new Row(
            "500", new ApiException(500, Map.of(), "{}"), Kind.UNAVAILABLE, OptionalInt.of(500)),
        new Row(
            "503", new ApiException(503, Map.of(), "{}"), Kind.UNAVAILABLE, OptionalInt.of(503)),
        new Row(
            "I/O timeout",
            new ApiException(new SocketTimeoutException("read timed out")),
            Kind.UNAVAILABLE,
            OptionalInt.empty()));
  }

  @Test
  void lockStoreAndClusterPortsClassifyEveryStatusAlike() {
    for (Row row : table()) {
      String what = "GET node n1 (" + row.name() + ")";
      LockBackendException lock =
          ApiFailures.toBackend(row.failure(), what, LockBackendException.Kind.NOT_FOUND);
      ClusterException cluster = KubernetesCluster.failure(what, row.failure());

      assertThat(lock.kind()).as(row.name()).isEqualTo(row.kind());
      assertThat(cluster.kind()).as(row.name()).isEqualTo(row.kind());
      assertThat(lock.httpStatus()).as(row.name()).isEqualTo(row.status());
      assertThat(cluster.httpStatus()).as(row.name()).isEqualTo(row.status());
      assertThat(cluster.isRetryable()).as(row.name()).isEqualTo(lock.isRetryable());
      assertThat(lock.getMessage()).as(row.name()).startsWith(what).isEqualTo(cluster.getMessage());
      assertThat(cluster.getCause()).isSameAs(lock.getCause()).isSameAs(row.failure());
    }
  }

  @Test
  void retryAfterOfA429IsReadOnceForBothPaths() {
    ApiFailures failures =
        new ApiFailures(3, Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofSeconds(5));
    Row throttled = table().get(5);
    assertThat(throttled.name()).isEqualTo("429 Retry-After");
    assertThat(failures.retryAfter(throttled.failure())).contains(Duration.ofSeconds(1));
  }

  @Test
  void anInterruptedCallIsInterruptedOnBothPathsWithTheFlagKept() {
    ApiException e = new ApiException(new InterruptedIOException("interrupted"));
    Thread.currentThread().interrupt();
    try {
      assertThat(
              ApiFailures.toBackend(e, "GET node n1", LockBackendException.Kind.NOT_FOUND).kind())
          .isEqualTo(Kind.INTERRUPTED);
      assertThat(KubernetesCluster.failure("GET pod d/p", e).kind()).isEqualTo(Kind.INTERRUPTED);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }
}
