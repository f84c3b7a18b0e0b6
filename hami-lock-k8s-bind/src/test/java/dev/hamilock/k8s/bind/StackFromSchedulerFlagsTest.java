package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.core.LockSettings;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * HAMi's scheduler flags configure the whole stack in one call (issue 27 item 3): their lock
 * settings, and the request timeout rule that lived in the extender example (10 s, or half the
 * extender HTTP timeout if shorter).
 */
class StackFromSchedulerFlagsTest {

  @Test
  void theFlagsLockSettingsAndRequestTimeoutReachTheStack() {
    HamiSchedulerFlags flags =
        HamiSchedulerFlags.parse(
            Map.of(),
            "--node-lock-retry-timeout=5s",
            "--extender-http-timeout=12s",
            "--node-lock-timeout=2m");
    LockSettings lock = flags.lockSettings();
    assertThat(lock.retryPolicy()).isEqualTo(flags.retryPolicy());
    assertThat(lock.lockTimeout()).isEqualTo(Duration.ofMinutes(2));
    try (KubernetesHamiStack hami =
        KubernetesHamiStack.builder(new ApiClient().setBasePath("http://127.0.0.1:9"))
            .watch(false)
            .schedulerFlags(flags)
            .build()) {
      assertThat(hami.settings().lock().retryPolicy()).isEqualTo(flags.retryPolicy());
      assertThat(hami.settings().lock().lockTimeout()).isEqualTo(Duration.ofMinutes(2));
      assertThat(hami.settings().requestTimeout())
          .as("half the 12 s extender HTTP timeout")
          .isEqualTo(Duration.ofSeconds(6));
    }
  }
}
