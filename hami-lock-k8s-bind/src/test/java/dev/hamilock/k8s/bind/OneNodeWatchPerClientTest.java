package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.HamiStack;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.Waiter;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.device.nvidia.NvidiaVendor;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.LockStackSettings;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.k8s.watch.NodeLockWatch;
import dev.hamilock.testkit.ApiServerEmulator;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 item 8: one node watch per API client serves every lock key. With two vendors on the
 * class path — NVIDIA ({@code hami.io/mutex.lock}) and a custom {@code example.org/fpga} vendor
 * with its own lock key — two scheduler replicas open two node watches (one each), not four, and
 * each replica's one watch wakes waiters of both keys. The emulator counts the watch requests.
 */
class OneNodeWatchPerClientTest {
  static final String FPGA_LOCK = "example.org/fpga.lock";
  static final String NODE = "gpu-node-1";

  /** A custom vendor with its own resource names and lock key (NVIDIA's code for the rest). */
  static DeviceVendor fpgaVendor() {
    DeviceVendor nvidia = new NvidiaVendor();
    return (DeviceVendor)
        Proxy.newProxyInstance(
            DeviceVendor.class.getClassLoader(),
            new Class<?>[] {DeviceVendor.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "commonWord" -> "FPGA";
                  case "nodeLockKey" -> Optional.of(FPGA_LOCK);
                  case "registrationAnnotationKey" -> "example.org/node-fpga-register";
                  case "defaultConfig" -> VendorConfig.of("example.org/fpga", null);
                  case "draDrivers" -> List.of(); // NVIDIA's DRA drivers stay NVIDIA's
                  case "toString" -> "FpgaTestVendor";
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  default -> {
                    try {
                      yield method.invoke(nvidia, args);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  }
                });
  }

  @Test
  void twoReplicasWithTwoVendorLockKeysOpenTwoNodeWatchesEachServingBothKeys() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, "GPU-a", "GPU-b"));
      k8s.resetCounters();
      List<KubernetesHamiStack> replicas = new ArrayList<>();
      try {
        for (int r = 0; r < 2; r++) {
          VendorRegistry registry =
              VendorRegistry.builder().register(new NvidiaVendor()).register(fpgaVendor()).build();
          KubernetesHamiStack hami =
              KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                  .stack(s -> s.registry(registry))
                  .build();
          replicas.add(hami);
          assertThat(hami.lockKeys()).containsExactly(FPGA_LOCK, NodeLock.DEFAULT_KEY);
          assertThat(hami.awaitReady(Duration.ofSeconds(10))).isTrue();
          assertThat(hami.lockWatchStates())
              .extracting(HamiStack.LockWatchState::key)
              .containsExactly(FPGA_LOCK, NodeLock.DEFAULT_KEY);
          assertThat(hami.lockWatchStates()).allMatch(HamiStack.LockWatchState::connected);
        }
        assertThat(k8s.requestCount("watch", "nodes"))
            .as("node watch requests of 2 replicas x 2 keys")
            .isEqualTo(2);
        assertThat(k8s.requestCount("list", "nodes")).as("node lists").isEqualTo(2);
      } finally {
        replicas.forEach(KubernetesHamiStack::close);
      }
    }
  }

  @Test
  void oneSharedWatchWakesTheWaitersOfEveryLockKey() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, "GPU-a", "GPU-b"));
      k8s.resetCounters();
      List<KubernetesLockStack> stacks = new ArrayList<>();
      NodeLockWatch shared =
          NodeLockWatch.builder(k8s.newApiClient(Duration.ofSeconds(10)))
              .watchApiClient(k8s.newApiClient(Duration.ZERO))
              .build();
      try {
        Map<String, KubernetesLockStack> waiters = new TreeMap<>();
        Map<String, KubernetesLockStack> holders = new TreeMap<>();
        for (String key : List.of(NodeLock.DEFAULT_KEY, FPGA_LOCK)) {
          waiters.put(
              key,
              KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                  .key(key)
                  .backend(
                      KubernetesLockStack.nodeAnnotationBackend(
                          k8s.newApiClient(Duration.ofSeconds(10)),
                          LockStackSettings.defaults(),
                          Optional.of(shared)))
                  .build());
          holders.put(
              key,
              KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                  .key(key)
                  .watch(false)
                  .build());
        }
        stacks.addAll(waiters.values());
        stacks.addAll(holders.values());
        shared.start();
        assertThat(shared.awaitSynced(Duration.ofSeconds(10))).isTrue();
        assertThat(shared.keys()).containsExactlyInAnyOrder(NodeLock.DEFAULT_KEY, FPGA_LOCK);
        LockOwner owner = LockOwner.of("default", "holder");
        for (String key : List.of(NodeLock.DEFAULT_KEY, FPGA_LOCK)) {
          assertThat(waiters.get(key).watch()).containsSame(shared);
          NodeLock theirs = holders.get(key).nodeLock();
          FairReleaseQueue queue = shared.releaseSignal(key);
          assertThat(waiters.get(key).releaseSignal()).containsSame(queue);
          theirs.acquire(NODE, owner);
          awaitObserved(shared, key, true);
          try (Waiter w = queue.join(NODE)) {
            theirs.release(NODE, owner);
            assertThat(w.await(Duration.ofSeconds(10)))
                .as("release of " + key + " wakes its waiter")
                .isTrue();
          }
        }
        assertThat(k8s.requestCount("watch", "nodes")).as("one stream for both keys").isEqualTo(1);
      } finally {
        stacks.forEach(KubernetesLockStack::close);
        shared.close();
      }
    }
  }

  private static void awaitObserved(ReleaseFeeder watch, String key, boolean locked)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (watch.observedLockValue(NODE, key).isPresent() != locked) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("watch did not observe " + key + (locked ? " held" : " free"));
      }
      Thread.sleep(2);
    }
  }
}
