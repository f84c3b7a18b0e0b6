package com.example.npu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The library's bind flow takes the third-party vendor's own lock next to HAMi's. */
class NpuBindTest {
  private final InMemoryCluster cluster = InMemoryCluster.create();
  private final VendorRegistry registry = VendorRegistry.discover();
  private final NodeLockProvider locks =
      NodeLockProvider.cached(
          key ->
              StoreNodeLock.create(
                  cluster.lockStore(),
                  LockSettings.builder()
                      .key(key)
                      .ownerLiveness(cluster.ownerLiveness())
                      .environment(Map.of())
                      .build()));
  private final PodBinder binder = PodBinder.builder(cluster, cluster, registry, locks).build();

  @Test
  void podUsingNpuAndNvidiaIsBoundHoldingBothLocks() throws Exception {
    cluster.addNode(Npu.node("node-a", true, true));
    cluster.addPod(Npu.pod("train", 1, 8192, 1, 3000));
    BindResult r = binder.bind("default", "train", "uid-train", "node-a");
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.lockKeys()).containsExactly(NpuVendor.LOCK_KEY, "hami.io/mutex.lock");
    Map<String, String> node = cluster.readNode("node-a").orElseThrow().annotations();
    assertThat(node).containsKeys(NpuVendor.LOCK_KEY, "hami.io/mutex.lock");
    assertThat(node.get(NpuVendor.LOCK_KEY)).contains("default").contains("train");
    PodView pod = cluster.readPod("default", "train").orElseThrow().view();
    assertThat(pod.annotations())
        .containsKeys(
            NpuVendor.ALLOCATED_ANNOTATION,
            NpuVendor.TO_ALLOCATE_ANNOTATION,
            "hami.io/vgpu-devices-allocated");
    assertThat(cluster.readPod("default", "train").orElseThrow().nodeName()).contains("node-a");
  }

  @Test
  void npuLockContentionDoesNotBlockNvidiaOnlyPods() throws Exception {
    cluster.addNode(Npu.node("node-a", true, true));
    cluster.addPod(PodView.builder("default", "holder").uid("uid-holder").build());
    locks
        .forKey(NpuVendor.LOCK_KEY)
        .acquire("node-a", LockOwner.of("default", "holder", "uid-holder"));
    cluster.addPod(Npu.pod("npu", 1, 8192, 0, 0));
    cluster.addPod(Npu.pod("gpu", 0, 0, 1, 3000));
    BindResult npu = binder.bind("default", "npu", "uid-npu", "node-a");
    assertThat(npu.outcome()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(npu.reason()).endsWith("node lock contention").contains("node-a");
    BindResult gpu = binder.bind("default", "gpu", "uid-gpu", "node-a");
    assertThat(gpu.outcome()).as(gpu.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(gpu.lockKeys()).isEqualTo(List.of("hami.io/mutex.lock"));
  }
}
