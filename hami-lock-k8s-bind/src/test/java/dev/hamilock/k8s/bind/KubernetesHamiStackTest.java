package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@link KubernetesHamiStack} facade: wiring, validation, and one bind → hand-off round trip.
 */
class KubernetesHamiStackTest {
  private ApiServerEmulator k8s;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  @Test
  void wiresOneLockPerVendorLockKeyAndSharesTheFlows() throws Exception {
    try (KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).build()) {
      assertThat(hami.registry().vendor("NVIDIA")).isPresent();
      assertThat(hami.lockKeys()).containsExactly(NodeLock.DEFAULT_KEY);
      assertThat(hami.settings().lock().key()).isEqualTo(NodeLock.DEFAULT_KEY);
      assertThat(hami.awaitReady(Duration.ofSeconds(10)))
          .isTrue(); // the key's release watch listed and watches
      assertThat(hami.podBinder()).isSameAs(hami.podBinder());
      assertThat(hami.podBinder().refitUnderLock()).isTrue();
      assertThat(hami.extenderFilter()).isSameAs(hami.extenderFilter());
      DevicePluginHandoff h = hami.devicePluginHandoff("NVIDIA");
      assertThat(hami.devicePluginHandoff("NVIDIA")).isSameAs(h);
      assertThatThrownBy(() -> hami.devicePluginHandoff("Acme"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("Acme")
          .hasMessageContaining("NVIDIA");
      assertThatThrownBy(() -> hami.devicePluginHandoff(" "))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(hami.settings().requestTimeout()).isEqualTo(Duration.ofSeconds(10));
    }
  }

  @Test
  void closeStopsTheWatchesAndIsIdempotent() {
    KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).build();
    hami.close();
    hami.close();
    assertThat(hami.toString()).contains("hami.io/mutex.lock");
  }

  @Test
  void theBuilderValidatesAndNamesTheSetting() {
    assertThatThrownBy(() -> KubernetesHamiStack.builder(null)).hasMessageContaining("apiClient");
    KubernetesHamiStack.Builder b = KubernetesHamiStack.builder(k8s.apiClient());
    assertThatThrownBy(() -> b.requestTimeout(Duration.ofSeconds(-1)).build())
        .hasMessageContaining("requestTimeout");
    assertThatThrownBy(
            () ->
                KubernetesHamiStack.builder(k8s.apiClient())
                    .requestTimeout(Duration.ofSeconds(31))
                    .build())
        .hasMessageContaining("requestTimeout");
    assertThatThrownBy(
            () -> KubernetesHamiStack.builder(k8s.apiClient()).lockTimeout(Duration.ZERO).build())
        .hasMessageContaining("lockTimeout");
    assertThatThrownBy(() -> KubernetesHamiStack.builder(k8s.apiClient()).retryPolicy(null).build())
        .hasMessageContaining("retryPolicy");
    assertThatThrownBy(() -> KubernetesHamiStack.builder(k8s.apiClient()).maxAttempts(0).build())
        .hasMessageContaining("maxAttempts");
    assertThatThrownBy(
            () ->
                KubernetesHamiStack.builder(k8s.apiClient())
                    .stack(s -> s.registry(VendorRegistry.builder().build()))
                    .build())
        .as("a new user without hami-device-nvidia learns what to add")
        .hasMessage(
            "registry must contain a vendor with a node lock key; vendors: []; put a vendor such"
                + " as dev.hamilock:hami-device-nvidia on the class path (ServiceLoader finds it)"
                + " or give registry(...) one");
  }

  @Test
  void refitAndFilterAnnotationsAreConfigurable() throws Exception {
    try (KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .stack(s -> s.refitUnderLock(false).writeFilterAnnotations(false))
            .watch(false)
            .retryPolicy(
                RetryPolicy.builder()
                    .pollInterval(Duration.ofMillis(5))
                    .retryTimeout(Duration.ofSeconds(2))
                    .build())
            .build()) {
      assertThat(hami.podBinder().refitUnderLock()).isFalse();
      assertThat(hami.awaitReady(Duration.ZERO)).isTrue(); // no watch to wait for
      EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode("n1", "GPU-1"));
      EmulatorObjects.createPod(k8s, PodBinderOverHttpTest.guidePod("p1", Map.of(), Map.of()));
      var pod = EmulatorObjects.readPod(k8s, "default", "p1");

      assertThat(hami.extenderFilter().filter(pod, java.util.List.of("n1")).node()).contains("n1");
      assertThat(EmulatorObjects.annotations(k8s, "default", "p1"))
          .doesNotContainKey("hami.io/vgpu-node");

      assertThat(hami.podBinder().bind("default", "p1", pod.uid(), "n1").outcome())
          .isEqualTo(BindOutcome.BOUND);
      HandoffResult h = hami.devicePluginHandoff("NVIDIA").allocateAll("n1");
      assertThat(h.status()).isEqualTo(HandoffResult.Status.COMPLETED);
      assertThat(h.lockReleased()).isTrue();
      assertThat(EmulatorObjects.lock(k8s, "n1")).isNull();
    }
  }
}
