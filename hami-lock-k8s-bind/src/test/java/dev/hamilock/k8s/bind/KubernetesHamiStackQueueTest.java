package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@link KubernetesHamiStack} bind flow on the fair per-node wake-up queue of its lock stack:
 * gang members queued on one node are served in arrival order, one release waking one waiter, also
 * when a thread that was served earlier comes back with another member (extender HTTP threads and
 * executors are reused). Requests are counted by the emulator; no timing thresholds.
 */
class KubernetesHamiStackQueueTest {
  static final String NS = PodBinderOverHttpTest.NS;
  static final String NODE = "gpu-node-1";

  private ApiServerEmulator k8s;
  private KubernetesHamiStack hami;
  private ExecutorService threadA;
  private ExecutorService threadB;
  private ExecutorService threadC;
  private final java.util.List<String> holders = new java.util.ArrayList<>();

  /**
   * Contended attempts, seen through the stack's settings listener (one per member: a waiter is
   * only woken by a release).
   */
  private final java.util.concurrent.atomic.AtomicInteger contended =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Acquire calls that ended ({@code waited}), per pod name, from the stack's one acquire loop. */
  private final Map<String, Boolean> waited = new java.util.concurrent.ConcurrentHashMap<>();

  /** Another scheduler holding the lock (its own client, no watch). */
  private KubernetesLockStack holderLocks;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    // a long safety net: while the watch is connected, only a release wakes a waiter
    hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .retryPolicy(
                RetryPolicy.builder()
                    .retryTimeout(Duration.ofSeconds(25))
                    .watchedPollInterval(Duration.ofSeconds(20))
                    .build())
            .listener(
                new NodeLockListener() {
                  @Override
                  public void contended(dev.hamilock.core.LockContentionException c) {
                    contended.incrementAndGet();
                  }

                  @Override
                  public void waited(
                      String node, LockOwner owner, Duration d, int attempts, boolean acquired) {
                    waited.put(owner.name(), acquired);
                  }
                })
            .build();
    holderLocks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).watch(false).build();
    threadA = Executors.newSingleThreadExecutor(r -> new Thread(r, "extender-A"));
    threadB = Executors.newSingleThreadExecutor(r -> new Thread(r, "extender-B"));
    threadC = Executors.newSingleThreadExecutor(r -> new Thread(r, "extender-C"));
  }

  @AfterEach
  void stop() {
    threadA.shutdownNow();
    threadB.shutdownNow();
    threadC.shutdownNow();
    hami.close();
    holderLocks.close();
    k8s.close();
  }

  @Test
  void aQueueOfGangMembersIsServedInArrivalOrderOneReleaseWakingOneWaiter() throws Exception {
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, "GPU-a", "GPU-b"));
    Map<String, String> uids = new java.util.HashMap<>();
    for (String w : new String[] {"holder", "w1", "w2", "w3", "w4"}) {
      uids.put(
          w,
          EmulatorObjects.pod(
                  EmulatorObjects.createPod(
                      k8s, PodBinderOverHttpTest.guidePod(w, Map.of(), Map.of())))
              .view()
              .uid());
    }
    assertThat(hami.awaitReady(Duration.ofSeconds(5))).isTrue();
    NodeLock lock = holderLocks.nodeLock();
    lock.acquire(NODE, LockOwner.of(NS, "holder"));

    LinkedBlockingQueue<String> servedOrder = new LinkedBlockingQueue<>();
    // thread A binds w1 and, once served, comes back with w4 (a reused extender thread)
    CompletableFuture<BindResult> w1 = bindOn(threadA, "w1", uids, servedOrder);
    awaitContended(1); // w1 waits
    CompletableFuture<BindResult> w2 = bindOn(threadB, "w2", uids, servedOrder);
    awaitContended(2); // w2 waits
    CompletableFuture<BindResult> w3 = bindOn(threadC, "w3", uids, servedOrder);
    awaitContended(3); // w3 waits

    long patches = k8s.requestCount("patch", "nodes");
    assertThat(lock.release(NODE, LockOwner.of(NS, "holder"))).isTrue();
    assertThat(w1.get(20, TimeUnit.SECONDS).outcome()).isEqualTo(BindOutcome.BOUND);
    // holder's release + w1's PATCH: the two sleeping waiters did not stir
    assertThat(k8s.requestCount("patch", "nodes") - patches).isEqualTo(2);
    assertThat(waited)
        .as("the stack's one acquire loop reported w1's wait to the settings listener")
        .containsEntry("w1", true);
    CompletableFuture<BindResult> w4 = bindOn(threadA, "w4", uids, servedOrder);
    // w1's place in the queue ended with its acquire call: w4 (same thread) queues behind w2 and w3
    awaitContended(4); // w4 waits

    String previous = EmulatorObjects.lock(k8s, NODE);
    Map<String, CompletableFuture<BindResult>> queued = new java.util.LinkedHashMap<>();
    queued.put("w2", w2);
    queued.put("w3", w3);
    queued.put("w4", w4);
    for (Map.Entry<String, CompletableFuture<BindResult>> next : queued.entrySet()) {
      patches = k8s.requestCount("patch", "nodes");
      HandoffResult h =
          hami.devicePluginHandoff("NVIDIA").allocateAll(NODE); // releases the holder's lock
      assertThat(h.lockReleased()).isTrue();
      previous = awaitNewHolder(previous);
      assertThat(holders)
          .as("lock holders after each handoff (arrival order w2, w3, w4)")
          .last()
          .isEqualTo(next.getKey());
      assertThat(next.getValue().get(20, TimeUnit.SECONDS).outcome()).isEqualTo(BindOutcome.BOUND);
      // one release wakes one waiter: the device plugin's release and the next member's PATCH
      assertThat(k8s.requestCount("patch", "nodes") - patches)
          .as("node PATCHes per handoff")
          .isEqualTo(2);
    }
    assertThat(holders).as("lock holders after each handoff").containsExactly("w2", "w3", "w4");
    assertThat(servedOrder).containsExactly("w1", "w2", "w3", "w4");
    assertThat(hami.devicePluginHandoff("NVIDIA").allocateAll(NODE).lockReleased()).isTrue();
    assertThat(EmulatorObjects.lock(k8s, NODE)).isNull();
  }

  /**
   * Waits until the lock names a holder other than {@code previous}; records it; returns the value.
   */
  private String awaitNewHolder(String previous) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      String v = EmulatorObjects.lock(k8s, NODE);
      if (v != null && !v.equals(previous)) {
        holders.add(v.substring(v.lastIndexOf(',') + 1));
        return v;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "no new lock holder after " + previous + "; holders so far " + holders);
      }
      Thread.sleep(2);
    }
  }

  /**
   * Waits until {@code n} contended attempts happened (the n-th member met the held lock and
   * queues).
   */
  private void awaitContended(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (contended.get() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("members did not meet the held lock: " + contended + " of " + n);
      }
      Thread.sleep(2);
    }
    Thread.sleep(20); // let it reach its place in the queue after the contended attempt
  }

  private CompletableFuture<BindResult> bindOn(
      ExecutorService thread,
      String pod,
      Map<String, String> uids,
      LinkedBlockingQueue<String> servedOrder) {
    return CompletableFuture.supplyAsync(
        () -> {
          BindResult r = hami.podBinder().bind(NS, pod, uids.get(pod), NODE);
          servedOrder.add(pod);
          return r;
        },
        thread);
  }
}
