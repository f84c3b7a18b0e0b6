package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.watch.KubeWatchTransport;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.List;
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
      assertThat(l.settings().lock().retryPolicy()).isEqualTo(RetryPolicy.defaults());
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
    assertThatThrownBy(() -> KubeWatchTransport.create(k8s.apiClient(), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("requestTimeout");
  }

  @Test
  void aKeyKubernetesWouldRefuseIsRejectedWhenTheSettingsAreBuilt() {
    // kube-apiserver checks annotation keys with apimachinery IsQualifiedName (of the key in lower
    // case); a refused key used to surface only at the first lock PATCH (422)
    String longPrefix =
        "a".repeat(63) + "." + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(61);
    for (String bad :
        List.of(
            "not a valid/annotation/key",
            "example.com/we~ird/key",
            "/lock",
            "example.com/",
            "-lock",
            "lock-",
            "exa_mple.com/lock",
            "x".repeat(64),
            longPrefix + "x/lock")) {
      assertThatThrownBy(
              () -> KubernetesLockStack.builder(k8s.apiClient()).watch(false).key(bad).build())
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(bad)
          .hasMessageContaining("annotation key")
          .hasMessageContaining("DNS-1123");
      assertThatThrownBy(() -> LockStackSettings.defaults().withKey(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(bad);
    }
    for (String good :
        List.of(
            "hami.io/mutex.lock",
            "lock",
            "Example.COM/Lock_1.x",
            "x".repeat(63),
            longPrefix + "/" + "y".repeat(63))) {
      assertThat(LockStackSettings.builder().key(good).environment(Map.of()).build().lock().key())
          .isEqualTo(good);
    }
  }
}
