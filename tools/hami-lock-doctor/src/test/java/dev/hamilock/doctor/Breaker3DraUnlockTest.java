package dev.hamilock.doctor;

import static dev.hamilock.doctor.Fixtures.LOCK;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.LockOwner;
import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reviewer (breaker3): the doctor's DRA-route unlock without {@code --force} (issue 28) for a pod
 * only partly routed through DRA. HAMi's vendors lock with one node annotation ({@code
 * hami.io/mutex.lock}, HAMi's {@code NodeLockNvidia} and the other vendors' lock names); a pod
 * whose {@code nvidia.com/gpu} went through DRA but whose other vendor's device (same lock key)
 * goes through that vendor's device plugin is "bound as any other" ({@code BindCall.Subject#of}):
 * the lock is taken and the other vendor's Allocate releases it. The doctor must treat that lock as
 * any live holder's: refuse to remove it without {@code --force}.
 */
class Breaker3DraUnlockTest {

  /** A second vendor sharing HAMi's one lock annotation, as HAMi's vendors do. */
  static final class SharedKeyVendor implements DeviceVendor {
    private final String key;

    /** Locking with {@code key}: HAMi's shared key, or the vendor's own. */
    SharedKeyVendor(String key) {
      this.key = key;
    }

    @Override
    public String commonWord() {
      return "ACME";
    }

    @Override
    public VendorConfig defaultConfig() {
      return VendorConfig.of("acme.example/dev", null);
    }

    @Override
    public Optional<String> nodeLockKey() {
      return Optional.of(key);
    }

    @Override
    public String registrationAnnotationKey() {
      return "hami.io/node-acme-register";
    }

    @Override
    public String toAllocateAnnotationKey() {
      return "hami.io/acme-devices-to-allocate";
    }

    @Override
    public String allocatedAnnotationKey() {
      return "hami.io/acme-devices-allocated";
    }

    @Override
    public Optional<ContainerDeviceRequest> parseRequest(ContainerView c, VendorConfig config) {
      Optional<BigDecimal> n = c.limitOrRequest(config.resourceNames().count());
      return n.filter(v -> v.signum() > 0)
          .map(v -> new ContainerDeviceRequest(v.intValue(), "ACME", 0, 100, 0));
    }

    @Override
    public List<DeviceInfo> decodeNodeDevices(NodeView node) {
      return List.of();
    }

    @Override
    public ContainerFit fit(List<DeviceUsage> devices, ContainerDeviceRequest r, FitContext ctx) {
      return ContainerFit.failure("unused");
    }
  }

  KubeBackend k8s;
  String ns = "default";

  @BackendTest
  void aPartlyDraRoutedHoldersLiveLockIsNotRemovedWithoutForce(KubeBackend backend)
      throws Exception {
    k8s = backend;
    Fixtures.Run unlocked = unlockPartlyDraRoutedHolder(LOCK);

    assertThat(Fixtures.lockOn(k8s, node))
        .as(
            "a live lock whose holder still waits for ACME's device plugin Allocate (the one"
                + " releasing it) removed without --force; doctor said: %s%s",
            unlocked.out(), unlocked.err())
        .isPresent();
    assertThat(unlocked.exit()).isNotZero();
  }

  /**
   * dra4: when ACME locks with its own key, the holder's {@code hami.io/mutex.lock} is NVIDIA's
   * alone, and NVIDIA went the DRA route: no Allocate releases it (HAMi's Go scheduler takes it for
   * such a pod, as hami-lock did before), so it is a DRA-route lock, removed without {@code
   * --force}.
   */
  @BackendTest
  void aPartlyDraRoutedHoldersLockOfTheDraVendorAloneIsRemovedWithoutForce(KubeBackend backend)
      throws Exception {
    k8s = backend;
    Fixtures.Run unlocked = unlockPartlyDraRoutedHolder("acme.example/dev.lock");

    assertThat(unlocked.exit()).as("%s%s", unlocked.out(), unlocked.err()).isZero();
    assertThat(unlocked.out()).contains("through DRA");
    assertThat(Fixtures.lockOn(k8s, node)).isEmpty();
  }

  String node;

  /**
   * A pod asking nvidia.com/gpu (given through DRA) and acme.example/dev (ACME locking with {@code
   * acmeKey}) holds {@code hami.io/mutex.lock}; {@code unlock} without {@code --force}.
   */
  private Fixtures.Run unlockPartlyDraRoutedHolder(String acmeKey) throws Exception {
    node = Fixtures.gpuNode(k8s, Fixtures.unique("b3dra"));
    String pod = Fixtures.unique("mixed");
    Fixtures.gpuPod(
        k8s, ns, pod, Map.of(), Map.of(), "ubuntu:22.04", Map.of("acme.example/dev", "1"));
    // kube-scheduler gave only nvidia.com/gpu through DRA; acme.example/dev is a device-plugin
    // resource whose Allocate releases the shared lock
    Fixtures.gpuViaDra(k8s, ns, pod);
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .watch(false)
            .build()) {
      locks.nodeLock().acquire(node, LockOwner.of(ns, pod));
    }
    VendorRegistry registry =
        VendorRegistry.builder().discover().register(new SharedKeyVendor(acmeKey)).build();
    return Fixtures.run(
        k8s,
        b -> b.clock(InstantSource.fixed(Instant.now())).registry(registry),
        "unlock",
        node,
        "--holder",
        ns + "/" + pod);
  }
}
