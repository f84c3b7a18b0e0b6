package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.reference.HamiBindLocking;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.reference.NvidiaVendorLock;
import dev.hamilock.testkit.ApiServerEmulator;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ResourceRequirements;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 4: HAMi's own gang retry (hami-reference's {@link HamiBindLocking}, polling every
 * 100 ms) waiting beside a sustained queue of this library's members on one node gets its turn
 * within its retry timeout: after {@link FairReleaseQueue#TURN} of continuous queue this process
 * leaves the released lock free for {@link FairReleaseQueue#LEAVE}. Mutual exclusion is checked on
 * every acquisition of both sides.
 */
class HamiPollerTurnTest {

  static final int MEMBERS = 6;
  static final Duration HAMI_RETRY_TIMEOUT = Duration.ofSeconds(20);

  @Test
  void hamiPollerBesideASustainedQueueOfOurMembersGetsItsTurnWithinItsRetryTimeout()
      throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start();
        KubernetesLockStack ours =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .retryPolicy(RetryPolicy.builder().retryTimeout(Duration.ofSeconds(28)).build())
                .build()) {
      Cluster cluster = new Cluster(k8s);
      String node = cluster.node(Cluster.unique("turn"));
      for (int i = 0; i < MEMBERS; i++) {
        cluster.pod("ns", "ours-" + i, "Pending");
      }
      cluster.pod("ns", "hami", "Pending");
      assertThat(ours.watch().orElseThrow().awaitSynced(Duration.ofSeconds(30))).isTrue();
      HamiBindLocking hami =
          HamiBindLocking.builder()
              .vendor(
                  NvidiaVendorLock.VENDOR,
                  new NvidiaVendorLock(
                      HamiNodeLock.builder(k8s.newApiClient(Duration.ofSeconds(5))).build()))
              .retryTimeout(HAMI_RETRY_TIMEOUT)
              .build();

      AtomicInteger holders = new AtomicInteger();
      AtomicInteger overlaps = new AtomicInteger();
      AtomicInteger ourAcquisitions = new AtomicInteger();
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService pool = Executors.newFixedThreadPool(MEMBERS + 1);
      try {
        List<Future<?>> members = new ArrayList<>();
        for (int i = 0; i < MEMBERS; i++) {
          LockOwner member = LockOwner.of("ns", "ours-" + i);
          members.add(
              pool.submit(
                  () -> {
                    while (!stop.get()) {
                      ours.acquirer().acquire(node, member, true, List.of(ours.nodeLock()));
                      hold(holders, overlaps);
                      ourAcquisitions.incrementAndGet();
                      ours.acquirer().releaseAll(node, member, List.of(ours.nodeLock()));
                    }
                    return null;
                  }));
        }
        long running = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (ourAcquisitions.get() < 10) {
          assertThat(System.nanoTime())
              .as("our members never got the queue going")
              .isLessThan(running);
          Thread.sleep(10); // the queue is running
        }
        Future<?> hamiMember =
            pool.submit(
                () -> {
                  V1Pod pod = gangPod("hami");
                  hami.acquireNodeLocks(node, pod); // polls every 100 ms, throws on timeout
                  hold(holders, overlaps);
                  hami.releaseAllDevices(node, pod);
                  return null;
                });
        long t0 = System.nanoTime();
        int before = ourAcquisitions.get();
        hamiMember.get(HAMI_RETRY_TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS);
        int duringHamiWait = ourAcquisitions.get() - before;
        System.out.printf(
            "HAMi poller acquired after %d ms; our members acquired %d times meanwhile%n",
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), duringHamiWait);
        stop.set(true);
        for (Future<?> f : members) {
          f.get(30, TimeUnit.SECONDS);
        }
        assertThat(duringHamiWait).as("our queue was sustained").isGreaterThan(MEMBERS);
        assertThat(overlaps).as("never two holders").hasValue(0);
        assertThat(cluster.lock(node)).isEmpty();
      } finally {
        stop.set(true);
        hami.shutdown();
        pool.shutdownNow();
      }
    }
  }

  /** Holds the lock 20 ms (the device plugin's Allocate), counting overlapping holders. */
  private static void hold(AtomicInteger holders, AtomicInteger overlaps)
      throws InterruptedException {
    if (holders.incrementAndGet() != 1) {
      overlaps.incrementAndGet();
    }
    Thread.sleep(20);
    holders.decrementAndGet();
  }

  private static V1Pod gangPod(String name) {
    return new V1Pod()
        .metadata(
            new V1ObjectMeta()
                .namespace("ns")
                .name(name)
                .labels(Map.of(HamiBindLocking.POD_GROUP_LABEL, "gang")))
        .spec(
            new V1PodSpec()
                .addContainersItem(
                    new V1Container()
                        .name("c")
                        .resources(
                            new V1ResourceRequirements()
                                .limits(Map.of("nvidia.com/gpu", new Quantity("1"))))));
  }
}
