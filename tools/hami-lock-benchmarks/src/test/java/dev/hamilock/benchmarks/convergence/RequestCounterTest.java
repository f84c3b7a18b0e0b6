package dev.hamilock.benchmarks.convergence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.RequestKey;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The plugin-lookup counter keys requests as the emulator does, so subtracting it is exact. */
class RequestCounterTest {

  @Test
  void keysMatchTheEmulatorsVerbsAndResources() {
    assertThat(RequestCounter.keyOf("GET", "/api/v1/nodes/n1", false))
        .isEqualTo(new RequestKey("get", "nodes"));
    assertThat(RequestCounter.keyOf("GET", "/api/v1/nodes", false))
        .isEqualTo(new RequestKey("list", "nodes"));
    assertThat(RequestCounter.keyOf("GET", "/api/v1/nodes", true))
        .isEqualTo(new RequestKey("watch", "nodes"));
    assertThat(RequestCounter.keyOf("PATCH", "/api/v1/nodes/n1", false))
        .isEqualTo(new RequestKey("patch", "nodes"));
    assertThat(RequestCounter.keyOf("GET", "/api/v1/namespaces/default/pods/p", false))
        .isEqualTo(new RequestKey("get", "pods"));
    assertThat(RequestCounter.keyOf("POST", "/api/v1/namespaces/default/pods/p/binding", false))
        .isEqualTo(new RequestKey("create", "pods/binding"));
    assertThat(RequestCounter.keyOf("GET", "/version", false))
        .isEqualTo(new RequestKey("get", "/version"));
  }

  @Test
  void countsWhatTheEmulatorCountsForTheSameClient() throws Exception {
    try (ApiServerEmulator emulator = ApiServerEmulator.start()) {
      emulator.createNode("n1", Map.of());
      RequestCounter counter = new RequestCounter();
      ApiClient client = counter.install(emulator.newApiClient(Duration.ofSeconds(10)));
      ApiClient other = emulator.newApiClient(Duration.ofSeconds(10));
      emulator.resetCounters();

      new CoreV1Api(client).readNode("n1").execute();
      new CoreV1Api(client).readNode("n1").execute();
      new CoreV1Api(other).readNode("n1").execute();

      assertThat(counter.snapshot())
          .containsExactlyEntriesOf(Map.of(new RequestKey("get", "nodes"), 2L));
      assertThat(RequestCounter.minus(emulator.requestCounts(), counter.snapshot()))
          .containsExactlyEntriesOf(Map.of(new RequestKey("get", "nodes"), 1L));
      counter.reset();
      assertThat(counter.snapshot()).isEmpty();
    }
  }

  @Test
  void subtractingMoreThanWasCountedIsReportedAndClamped() {
    RequestKey get = new RequestKey("get", "nodes");
    RequestKey patch = new RequestKey("patch", "nodes");
    assertThat(RequestCounter.excess(Map.of(get, 1L), Map.of(get, 2L)))
        .hasValueSatisfying(e -> assertThat(e).contains("get nodes").contains("2").contains("1"));
    assertThat(RequestCounter.minus(Map.of(get, 1L, patch, 3L), Map.of(get, 2L)))
        .containsExactlyEntriesOf(Map.of(patch, 3L));
    assertThat(RequestCounter.excess(Map.of(get, 2L), Map.of(get, 2L))).isEmpty();
    assertThat(RequestCounter.minus(Map.of(get, 2L), Map.of(get, 2L))).isEmpty();
  }

  @Test
  void aCallThatGetsNoAnswerIsNotCounted() throws Exception {
    RequestCounter counter = new RequestCounter();
    ApiClient client;
    try (ApiServerEmulator emulator = ApiServerEmulator.start()) {
      client = counter.install(emulator.newApiClient(Duration.ofSeconds(2)));
    }
    assertThatThrownBy(() -> new CoreV1Api(client).readNode("n1").execute()).isNotNull();
    assertThat(counter.snapshot()).isEmpty();
  }
}
