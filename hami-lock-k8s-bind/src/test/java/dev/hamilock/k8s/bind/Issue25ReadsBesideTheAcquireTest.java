package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.HamiFlows;
import dev.hamilock.bind.HamiStack;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.fabric8.bind.Fabric8HamiStack;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.RequestInfo;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 2, the hand-off chain: with the node watch current, a {@code bindAsync} attempts
 * the lock conditioned on the node's {@code resourceVersion} at which the watch showed it free, and
 * reads the node's usage beside that PATCH instead of after it; only a lock won at that version
 * uses those reads. On the emulator through client-java's and fabric8's stacks:
 *
 * <ul>
 *   <li>the lock's PATCH is held until the reads of the round have arrived (read after the lock,
 *       they never would: the test fails) — for a filtered pod the node's GET and the DRA snapshot,
 *       its pod LISTs coming after the write of its Filter allocation; the bind sends no extra
 *       request;
 *   <li>the ABA: while the conditioned PATCH is held, another process's binder takes the free lock,
 *       binds a pod filling the card and its lock is released. The node moved on, the PATCH fails
 *       its version test, the lock is taken plainly and read again: the pod does not fit. Without
 *       the version in the PATCH (or with the early reads used whatever version the lock was won
 *       at) it is bound on reads that miss the other pod, and the card is over-committed.
 * </ul>
 */
class Issue25ReadsBesideTheAcquireTest {
  private static final RetryPolicy FAST =
      RetryPolicy.builder()
          .pollInterval(Duration.ofMillis(5))
          .retryTimeout(Duration.ofSeconds(5))
          .build();

  private static final long WAIT_S = 5;

  @Test
  void theUsageReadsAreInFlightBeforeTheConditionedLockPatchIsAnsweredOnBothClients()
      throws Exception {
    onBothClients(
        (k8s, hami) -> {
          String run = hami instanceof KubernetesHamiStack ? "cj" : "f8";
          String node = run + "-beside-node";
          PodView pod = filtered(k8s, hami, run + "-beside", node, 30);
          // the bind's pod GET, then the node's GET and the DRA snapshot's two LISTs
          CountDownLatch round = new CountDownLatch(1 + 3);
          List<String> before = new CopyOnWriteArrayList<>();
          AtomicBoolean patched = new AtomicBoolean();
          k8s.addFault(
              FaultRule.matching()
                  .invoke(
                      (RequestInfo r) -> {
                        if (r.verb().equals("patch") && r.resource().equals("nodes")) {
                          try {
                            round.await(WAIT_S, TimeUnit.SECONDS);
                          } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                          }
                          patched.set(true);
                        } else if (!patched.get() && Set.of("get", "list").contains(r.verb())) {
                          before.add(r.verb() + " " + r.resource());
                          round.countDown();
                        }
                      }));
          k8s.resetCounters();
          BindResult r = bindAsync(hami, pod, node);
          k8s.clearFaults();
          assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
          assertThat(before)
              .as("%s: the reads that arrived before the lock's PATCH was answered", run)
              .containsExactlyInAnyOrder(
                  "get pods", "get nodes", "list resourceslices", "list resourceclaims");
          // the pod LISTs wait for the write of the Filter's allocation, after the lock
          assertThat(Issue25OneReadRoundUnderTheLockTest.counts(k8s))
              .as("%s: the requests of a bind", run)
              .isEqualTo(Issue25OneReadRoundUnderTheLockTest.BIND);
          return null;
        });
  }

  @Test
  void aHolderBetweenTheWatchedVersionAndTheConditionedPatchIsSeenByTheReadsOnBothClients()
      throws Exception {
    onBothClients(
        (k8s, hami) -> {
          String run = hami instanceof KubernetesHamiStack ? "cj" : "f8";
          String node = run + "-aba-node";
          // neither pod filtered: each bind fits under its lock, so only its reads count the other
          PodView pod = created(k8s, run + "-aba", node, 60);
          PodView other = created(k8s, run + "-aba-other", node, 60);
          // the holder in between is another scheduler process: within one, a waiter's attempt
          // waits while another is in flight (LockReleaseSignal.beginAttempt)
          KubernetesHamiStack replica =
              KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                  .retryPolicy(FAST)
                  .build();
          try {
            assertThat(replica.awaitReady(Duration.ofSeconds(10))).isTrue();
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
          // the bind's pod GET, then the node GET, two pod LISTs and the two DRA LISTs: a pod with
          // no Filter allocation reads before it writes, so all its reads go beside the lock
          CountDownLatch round = new CountDownLatch(1 + 5);
          AtomicBoolean sneaked = new AtomicBoolean();
          AtomicReference<String> between = new AtomicReference<>("not run");
          k8s.addFault(
              FaultRule.matching()
                  .invoke(
                      (RequestInfo r) -> {
                        if (Set.of("get", "list").contains(r.verb())) {
                          round.countDown();
                        }
                        if (!(r.verb().equals("patch") && r.resource().equals("nodes"))
                            || !sneaked.compareAndSet(false, true)) {
                          return;
                        }
                        // the first lock PATCH waits until the bind's reads are out, while
                        // another binder takes the free lock, binds a pod and its plugin releases
                        try {
                          round.await(WAIT_S, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        BindResult o =
                            replica
                                .podBinder()
                                .bind(PodBinderOverHttpTest.NS, other.name(), other.uid(), node);
                        HandoffResult h = replica.devicePluginHandoff("NVIDIA").allocateAll(node);
                        between.set(o.outcome() + " " + h.status());
                      }));
          BindResult r = bindAsync(hami, pod, node);
          k8s.clearFaults();
          replica.close();
          assertThat(between.get())
              .as("%s: the binder and device plugin in between", run)
              .isEqualTo("BOUND COMPLETED");
          assertThat(r.outcome())
              .as("%s: %s (60 + 60 %% of one card's cores)", run, r.reason())
              .isEqualTo(BindOutcome.DOES_NOT_FIT);
          return null;
        });
  }

  /** Runs {@code test} on a fresh emulator through each client's whole stack, its watch synced. */
  private static void onBothClients(BiFunction<ApiServerEmulator, HamiStack, Void> test)
      throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.builder().servingDra(true).start()) {
      try (KubernetesHamiStack hami =
          KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
              .retryPolicy(FAST)
              .build()) {
        assertThat(hami.awaitReady(Duration.ofSeconds(10))).isTrue();
        test.apply(k8s, hami);
      }
      try (KubernetesClient client = Fabric8Replicas.client(k8s);
          var hami = Fabric8HamiStack.builder(client).retryPolicy(FAST).build()) {
        assertThat(hami.awaitReady(Duration.ofSeconds(10))).isTrue();
        test.apply(k8s, hami);
      }
    }
  }

  private static BindResult bindAsync(HamiFlows hami, PodView pod, String node) {
    ExecutorService steps = Executors.newFixedThreadPool(8);
    try {
      return hami.podBinder()
          .bindAsync(PodBinderOverHttpTest.NS, pod.name(), pod.uid(), node, steps)
          .get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    } finally {
      steps.shutdownNow();
    }
  }

  /**
   * A gang member asking one card with {@code cores} % of its cores, filtered onto {@code node}
   * (created first, after the stack's watch listed: its ADDED event gives the watch its version).
   */
  private static PodView filtered(
      ApiServerEmulator k8s, HamiFlows hami, String name, String node, int cores) {
    PodView pod = created(k8s, name, node, cores);
    FilterDecision d = hami.extenderFilter().filter(pod, List.of(node));
    assertThat(d.node()).as("%s", d).contains(node);
    return pod;
  }

  /** The pod of {@link #filtered}, not filtered; its node created if missing. */
  static PodView created(ApiServerEmulator k8s, String name, String node, int cores) {
    if (k8s.get("nodes", null, node).isEmpty()) {
      EmulatorObjects.createNode(
          k8s, PodBinderOverHttpTest.gpuNode(node, "GPU-" + node + "-0fc3eda5-e98b-a25b"));
    }
    PodView asked = PodBinderOverHttpTest.guidePod(name, Map.of(), Map.of(), "gang-" + node, cores);
    return EmulatorObjects.pod(EmulatorObjects.createPod(k8s, asked)).view();
  }
}
