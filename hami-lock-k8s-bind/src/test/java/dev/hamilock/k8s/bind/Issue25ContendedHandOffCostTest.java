package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.RequestInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 2 in contention: replicas, each with its own node watch, each with a gang member
 * waiting for one node's lock. One release wakes a waiter in every replica; each sees the lock free
 * at the release's version, so each starts a round of usage reads and a PATCH conditioned on that
 * version; one wins, the others fail the version test and go on at once with a plain PATCH. This
 * test counts the requests of one hand-off (from the release to the next holder's Binding) and
 * bounds them: the losers' reads are the price of the winner's (issue 25 item 2).
 */
class Issue25ContendedHandOffCostTest {
  private static final RetryPolicy FAST =
      RetryPolicy.builder()
          .pollInterval(Duration.ofMillis(5))
          .retryTimeout(Duration.ofSeconds(20))
          .build();

  @Test
  void oneHandOffAmongWaitingReplicasCountsItsRequests() throws Exception {
    int waiting = 3;
    try (ApiServerEmulator k8s = ApiServerEmulator.builder().servingDra(true).start()) {
      List<KubernetesHamiStack> stacks = new ArrayList<>();
      ExecutorService steps = Executors.newFixedThreadPool(16);
      try {
        for (int i = 0; i <= waiting; i++) {
          KubernetesHamiStack s =
              KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                  .retryPolicy(FAST)
                  .build();
          stacks.add(s);
          assertThat(s.awaitReady(Duration.ofSeconds(10))).isTrue();
        }
        String node = "contended-node";
        PodView holder = Issue25ReadsBesideTheAcquireTest.created(k8s, "holder", node, 10);
        BindResult h =
            stacks
                .get(0)
                .podBinder()
                .bind(PodBinderOverHttpTest.NS, holder.name(), holder.uid(), node);
        assertThat(h.outcome()).as(h.reason()).isEqualTo(BindOutcome.BOUND);
        List<CompletableFuture<BindResult>> binds = new ArrayList<>();
        for (int i = 1; i <= waiting; i++) {
          PodView p = Issue25ReadsBesideTheAcquireTest.created(k8s, "waiter-" + i, node, 10);
          binds.add(
              stacks
                  .get(i)
                  .podBinder()
                  .bindAsync(PodBinderOverHttpTest.NS, p.name(), p.uid(), node, steps));
        }
        quiet(k8s); // every waiter tried once and waits for a release
        Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
        k8s.addFault(
            FaultRule.matching()
                .invoke(
                    (RequestInfo r) -> {
                      if (!r.verb().equals("watch")) {
                        counts
                            .computeIfAbsent(r.verb() + " " + r.resource(), k -> new AtomicLong())
                            .incrementAndGet();
                      }
                    }));
        assertThat(stacks.get(0).devicePluginHandoff("NVIDIA").allocateAll(node).status())
            .hasToString("COMPLETED");
        CompletableFuture.anyOf(binds.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
        quiet(k8s); // the losers' requests of this hand-off, all of them (an upper bound follows)
        Map<String, Long> seen = new TreeMap<>();
        counts.forEach((k, v) -> seen.put(k, v.get()));
        k8s.clearFaults();
        // measured: {create pods/binding=1, get /apis/resource.k8s.io/v1=3, get nodes=5, get
        // pods=3, list pods=6, list resourceclaims=3, list resourceslices=3, patch nodes=6, patch
        // pods=2} (32 requests); with the conditioned attempt off: get /apis/resource.k8s.io/v1=1,
        // get nodes=3, list pods=2, list resourceclaims=1, list resourceslices=1, patch nodes=4,
        // the rest alike (18). Each losing replica: one PATCH, one node GET, two pod LISTs, two
        // DRA LISTs and a discovery GET more. The bounds: the release, then per replica at most
        // the conditioned PATCH and a plain one, and one round of reads
        assertThat(seen.getOrDefault("patch nodes", 0L))
            .as("node PATCHes of one hand-off: %s", seen)
            .isLessThanOrEqualTo(1 + 2L * waiting);
        // (a third pod LIST when the lock's PATCH lands between a replica's two: the emulator
        // serves reads as they come, kube-apiserver after the same watch-cache progress)
        assertThat(seen.getOrDefault("list pods", 0L))
            .as("pod LISTs of one hand-off: %s", seen)
            .isLessThanOrEqualTo(3L * waiting);
        assertThat(
                seen.getOrDefault("list resourceslices", 0L)
                    + seen.getOrDefault("list resourceclaims", 0L))
            .as("DRA LISTs of one hand-off: %s", seen)
            .isLessThanOrEqualTo(2L * waiting);
        // let the others finish
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!binds.stream().allMatch(CompletableFuture::isDone)
            && System.nanoTime() < deadline) {
          stacks.get(0).devicePluginHandoff("NVIDIA").allocateAll(node);
          Thread.sleep(20); // polling the device plugin's work, bounded by the deadline
        }
        for (CompletableFuture<BindResult> b : binds) {
          b.get(30, TimeUnit.SECONDS);
        }
      } finally {
        steps.shutdownNow();
        for (KubernetesHamiStack s : stacks) {
          s.close();
        }
      }
    }
  }

  /**
   * Waits until the emulator has received no request for 200 ms (at most 10 s): the replicas' work
   * of this step is over, so counts taken now are complete.
   */
  private static void quiet(ApiServerEmulator k8s) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    long last = -1;
    int still = 0;
    while (still < 10 && System.nanoTime() < deadline) {
      long now = k8s.totalRequests();
      still = now == last ? still + 1 : 0;
      last = now;
      Thread.sleep(20); // polling the request counter, bounded by the deadline
    }
    assertThat(still).as("no request for 200 ms within 10 s").isEqualTo(10);
  }
}
