package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.HamiFlows;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.fabric8.Fabric8LockStack;
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
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 2, the hand-off chain: under the lock a {@code bindAsync} of a filtered pod first
 * writes the Filter's allocation, then reads everything its re-fit needs in one round, with the
 * lock's confirmation before the Binding (a node GET) — the node's GET, the two pod LISTs (each
 * asking for at least that write's version, {@code resourceVersionMatch=NotOlderThan}) and the DRA
 * snapshot's ResourceSlices LIST all in flight at once, the snapshot's ResourceClaims LIST after
 * its slices (watch-cache reads of a few ms) — on a server that serves {@code resource.k8s.io/v1},
 * through client-java's and fabric8's stacks (no node watch here: with one, the node's GET and the
 * DRA snapshot go beside the lock's PATCH, {@code Issue25ReadsBesideTheAcquireTest}); and sends the
 * same requests as the blocking bind, which reads in sequence.
 *
 * <p>The emulator holds each of the first {@value #ROUND} reads after the allocation's PATCH until
 * all {@value #ROUND} have arrived, at most {@value #WAIT_S} s: read in sequence, one read waits
 * alone, times out and the test fails.
 */
class Issue25OneReadRoundUnderTheLockTest {
  /** GET node, LIST pods twice, LIST resourceslices, GET node (the lock's confirmation). */
  static final int ROUND = 5;

  static final long WAIT_S = 5;

  private static final RetryPolicy FAST =
      RetryPolicy.builder()
          .pollInterval(Duration.ofMillis(5))
          .retryTimeout(Duration.ofSeconds(5))
          .build();

  /** A bind's requests on a server serving DRA, by verb and resource. */
  static final Map<String, Long> BIND =
      Map.of(
          "get pods", 1L,
          "get nodes", 2L, // the re-fit's, the lock's confirmation before the Binding
          "patch nodes", 1L,
          "list pods", 2L,
          "list resourceslices", 1L,
          "list resourceclaims", 1L,
          "patch pods", 1L,
          "create pods/binding", 1L);

  @Test
  void underTheLockEveryReadOfTheRefitIsInFlightAtOnceOnBothClients() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.builder().servingDra(true).start()) {
      try (KubernetesHamiStack hami =
          KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
              .retryPolicy(FAST)
              .watch(false)
              .build()) {
        assertOneRound(k8s, hami, "cj");
      }
      try (KubernetesClient client = Fabric8Replicas.client(k8s);
          var hami =
              Fabric8HamiStack.builder(client)
                  .retryPolicy(FAST)
                  .backend(Fabric8LockStack.backend(client, Optional.empty()))
                  .build()) {
        assertOneRound(k8s, hami, "f8");
      }
    }
  }

  /** Filters a fresh pod onto a fresh node, then binds it asynchronously, the reads held. */
  private static void assertOneRound(ApiServerEmulator k8s, HamiFlows hami, String run)
      throws Exception {
    PodView pod = filtered(k8s, hami, run + "-async");
    String node = run + "-async-node";
    Round afterWrite = new Round(ROUND);
    AtomicBoolean locked = new AtomicBoolean();
    AtomicBoolean written = new AtomicBoolean();
    List<String> beforeWrite = new CopyOnWriteArrayList<>();
    List<String> podListQueries = new CopyOnWriteArrayList<>();
    k8s.addFault(
        FaultRule.matching()
            .invoke(
                (RequestInfo r) -> {
                  boolean read = Set.of("get", "list").contains(r.verb());
                  if (r.verb().equals("patch") && r.resource().equals("nodes")) {
                    locked.set(true);
                  } else if (r.verb().equals("patch") && r.resource().equals("pods")) {
                    written.set(locked.get());
                  } else if (read && written.get()) {
                    if (r.verb().equals("list") && r.resource().equals("pods")) {
                      podListQueries.add(r.query());
                    }
                    afterWrite.hold(r);
                  } else if (read && locked.get()) {
                    beforeWrite.add(r.verb() + " " + r.resource());
                  }
                }));
    k8s.resetCounters();
    ExecutorService steps = Executors.newFixedThreadPool(8);
    try {
      BindResult r =
          hami.podBinder()
              .bindAsync(PodBinderOverHttpTest.NS, pod.name(), pod.uid(), node, steps)
              .get(60, TimeUnit.SECONDS);
      assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    } finally {
      steps.shutdownNow();
      k8s.clearFaults();
    }
    assertThat(beforeWrite)
        .as("%s: reads between the lock's PATCH and the allocation's", run)
        .isEmpty();
    assertThat(afterWrite.met)
        .as("%s: the reads after the allocation's PATCH that met all %d in flight", run, ROUND)
        .containsExactlyInAnyOrder(
            "get nodes", "get nodes", "list pods", "list pods", "list resourceslices");
    assertThat(podListQueries)
        .as("%s: the pod LISTs ask for at least the allocation write's version", run)
        .hasSize(2)
        .allSatisfy(
            q ->
                assertThat(q)
                    .contains("resourceVersionMatch=NotOlderThan")
                    .containsPattern("resourceVersion=[1-9][0-9]*"));
    Map<String, Long> async = counts(k8s);

    PodView blocking = filtered(k8s, hami, run + "-blocking");
    k8s.resetCounters();
    BindResult r =
        hami.podBinder()
            .bind(
                PodBinderOverHttpTest.NS, blocking.name(), blocking.uid(), run + "-blocking-node");
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(counts(k8s)).as("%s, in sequence", run).isEqualTo(BIND);
    assertThat(async).as("%s, side by side", run).isEqualTo(BIND);
  }

  /** A fresh node, a fresh guide pod, filtered onto the node (DRA's discovery made here). */
  private static PodView filtered(ApiServerEmulator k8s, HamiFlows hami, String name) {
    String node = name + "-node";
    EmulatorObjects.createNode(
        k8s, PodBinderOverHttpTest.gpuNode(node, "GPU-" + name + "-0fc3eda5-e98b-a25b"));
    PodView pod =
        EmulatorObjects.pod(
                EmulatorObjects.createPod(
                    k8s, PodBinderOverHttpTest.guidePod(name, Map.of(), Map.of())))
            .view();
    FilterDecision d = hami.extenderFilter().filter(pod, List.of(node));
    assertThat(d.node()).as("%s", d).contains(node);
    return pod;
  }

  /** Holds each of the first {@code size} reads handed to it until all have arrived. */
  private static final class Round {
    private final int size;
    private final AtomicInteger arrived = new AtomicInteger();
    private final AtomicBoolean alone = new AtomicBoolean();
    private final CountDownLatch all;
    final List<String> met = new CopyOnWriteArrayList<>();

    Round(int size) {
      this.size = size;
      this.all = new CountDownLatch(size);
    }

    void hold(RequestInfo r) {
      if (arrived.incrementAndGet() > size) {
        return;
      }
      all.countDown();
      try {
        if (!alone.get() && all.await(WAIT_S, TimeUnit.SECONDS)) {
          met.add(r.verb() + " " + r.resource());
        } else {
          alone.set(true); // the others are not in flight: do not wait again
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The emulator's request counts by verb and resource, watches left out. */
  static Map<String, Long> counts(ApiServerEmulator k8s) {
    Map<String, Long> counts = new TreeMap<>();
    k8s.requestCounts()
        .forEach(
            (k, v) -> {
              if (!k.verb().equals("watch")) {
                counts.put(k.toString(), v);
              }
            });
    return counts;
  }
}
