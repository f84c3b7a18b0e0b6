package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.RetryPolicy;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BuilderAndSignalTest {

  static ApiServerEmulator k8s;

  @BeforeAll
  static void start() {
    k8s = ApiServerEmulator.start();
  }

  @AfterAll
  static void stop() {
    k8s.close();
  }

  @Test
  void lockTimeoutPrecedenceIsExplicitThenEnvironmentThenFiveMinutes() {
    try (KubernetesLockStack l =
        KubernetesLockStack.builder(k8s.apiClient())
            .watch(false)
            .environment(Map.of("HAMI_NODELOCK_EXPIRE", "10m"))
            .lockTimeout(Duration.ofMinutes(2))
            .build()) {
      assertThat(l.nodeLock().lockTimeout()).isEqualTo(Duration.ofMinutes(2));
    }
    try (KubernetesLockStack l =
        KubernetesLockStack.builder(k8s.apiClient())
            .watch(false)
            .environment(Map.of("HAMI_NODELOCK_EXPIRE", "10m"))
            .build()) {
      assertThat(l.nodeLock().lockTimeout()).isEqualTo(Duration.ofMinutes(10));
      assertThat(l.releaseSignal()).isEmpty();
      assertThat(l.watch()).isEmpty();
    }
    try (KubernetesLockStack l =
        KubernetesLockStack.builder(k8s.apiClient()).watch(false).environment(Map.of()).build()) {
      assertThat(l.nodeLock().lockTimeout()).isEqualTo(Duration.ofMinutes(5));
      assertThat(l.nodeLock().key()).isEqualTo("hami.io/mutex.lock");
      assertThat(l.acquirer().policy()).isEqualTo(RetryPolicy.defaults());
    }
  }

  @Test
  void invalidSettingsAreRejectedNamingThem() {
    assertThatThrownBy(() -> KubernetesLockStack.builder(null)).hasMessageContaining("apiClient");
    assertThatThrownBy(
            () ->
                KubernetesLockStack.builder(k8s.apiClient())
                    .watch(false)
                    .environment(Map.of("HAMI_NODELOCK_EXPIRE", "notaduration"))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("notaduration");
    assertThatThrownBy(() -> KubernetesLockStack.builder(k8s.apiClient()).key(" ").build())
        .hasMessageContaining("key");
    assertThatThrownBy(
            () ->
                KubernetesLockStack.builder(k8s.apiClient())
                    .requestTimeout(Duration.ofSeconds(30))
                    .build())
        .hasMessageContaining("requestTimeout")
        .hasMessageContaining("extender");
    assertThatThrownBy(() -> RetryPolicy.builder().retryTimeout(Duration.ofSeconds(30)).build())
        .hasMessageContaining("30s");
    assertThatThrownBy(() -> KubernetesLockStack.builder(k8s.apiClient()).retryPolicy(null).build())
        .hasMessageContaining("retryPolicy");
    assertThatThrownBy(
            () -> KubernetesLockStack.builder(k8s.apiClient()).maxAttempts(0).watch(false).build())
        .hasMessageContaining("maxAttempts");
  }
}
