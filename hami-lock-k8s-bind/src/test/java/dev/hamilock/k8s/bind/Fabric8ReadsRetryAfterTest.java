package dev.hamilock.k8s.bind;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.sun.net.httpserver.HttpServer;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.fabric8.Fabric8OwnerLiveness;
import dev.hamilock.fabric8.bind.Fabric8Cluster;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fabric8 ports' reads repeat a 429 or 5xx after its {@code Retry-After} capped at 5 s, as
 * core's lock store and client-java's ports do. fabric8 8.0's own repetitions ({@code
 * StandardHttpClient.shouldRetry}: {@code max(Retry-After, back-off)}) waited whatever the answer
 * said: a proxy or gateway answering {@code Retry-After: 3600} held a bind's read, and the node
 * lock it holds, for an hour per repetition.
 */
class Fabric8ReadsRetryAfterTest {

  private static final String POD =
      """
      {"kind": "Pod", "apiVersion": "v1",
       "metadata": {"name": "p", "namespace": "ns", "uid": "uid-1", "resourceVersion": "7"},
       "spec": {"nodeName": "node-a"}, "status": {"phase": "Running"}}
      """;

  private HttpServer server;
  private KubernetesClient fabric8;
  private final AtomicInteger requests = new AtomicInteger();
  private final List<Long> arrivals = Collections.synchronizedList(new ArrayList<>());

  /** Answers to give in turn: a status, and a Retry-After header or null; then 200 with POD. */
  private final Deque<Object[]> failures = new ArrayDeque<>();

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          requests.incrementAndGet();
          arrivals.add(System.nanoTime());
          Object[] failure;
          synchronized (failures) {
            failure = failures.poll();
          }
          byte[] body =
              failure == null
                  ? POD.getBytes(UTF_8)
                  : ("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":"
                          + failure[0]
                          + "}")
                      .getBytes(UTF_8);
          if (failure != null && failure[1] != null) {
            exchange.getResponseHeaders().add("Retry-After", (String) failure[1]);
          }
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(failure == null ? 200 : (int) failure[0], body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
    fabric8 =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder()
                    .withMasterUrl("http://127.0.0.1:" + server.getAddress().getPort())
                    .withRequestTimeout(5_000)
                    .build())
            .build();
  }

  @AfterEach
  void stop() {
    fabric8.close();
    server.stop(0);
  }

  private void fail(int status, String retryAfter, int times) {
    synchronized (failures) {
      for (int i = 0; i < times; i++) {
        failures.add(new Object[] {status, retryAfter});
      }
    }
  }

  @Test
  void aReadAnswered429IsRepeatedAfterItsRetryAfter() throws Exception {
    fail(429, "1", 1);

    assertThat(Fabric8OwnerLiveness.create(fabric8).check(LockOwner.of("ns", "p", "uid-1")))
        .isEqualTo(OwnerLiveness.State.ALIVE);
    assertThat(arrivals).hasSize(2);
    assertThat(arrivals.get(1) - arrivals.get(0)).isGreaterThanOrEqualTo(900_000_000L);
  }

  @Test
  void aReadAnswered429WithAnHourOfRetryAfterIsRepeatedWithinTheCap() {
    fail(429, "3600", 1);
    OwnerLiveness liveness = Fabric8OwnerLiveness.create(fabric8);

    OwnerLiveness.State state =
        assertTimeoutPreemptively(
            Duration.ofSeconds(20), () -> liveness.check(LockOwner.of("ns", "p", "uid-1")));

    assertThat(state).isEqualTo(OwnerLiveness.State.ALIVE);
    assertThat(requests).hasValue(2);
  }

  @Test
  void theClusterPortsReadAgainAfterAServiceUnavailable() {
    fail(503, "1", 1);
    Fabric8Cluster cluster = Fabric8Cluster.create(fabric8);

    var pod = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> cluster.readPod("ns", "p"));

    assertThat(pod).hasValueSatisfying(p -> assertThat(p.resourceVersion()).isEqualTo("7"));
    assertThat(requests).hasValue(2);
  }

  @Test
  void aReadStillFailingAfterFourRepetitionsFailsUnavailable() {
    fail(500, null, 5);
    Fabric8Cluster cluster = Fabric8Cluster.create(fabric8);

    assertThatThrownBy(() -> cluster.readPod("ns", "p"))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> assertThat(e.kind()).isEqualTo(ClusterException.Kind.UNAVAILABLE));
    assertThat(requests).hasValue(5);
  }

  @Test
  void aRefusalIsNotRepeated() {
    fail(403, null, 1);
    OwnerLiveness liveness = Fabric8OwnerLiveness.create(fabric8);

    assertThatThrownBy(() -> liveness.check(LockOwner.of("ns", "p", "uid-1")))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED));
    assertThat(requests).hasValue(1);
  }
}
