package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.annotation.AnnotationLockStore;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.testkit.FaultRule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 13 item 11: on a node without an annotations map the first lock is written by a merge patch
 * conditional on {@code resourceVersion}. Losing that race to another writer used to end as {@code
 * UNAVAILABLE} ("outcome still not applied after retries … node changed since resourceVersion …")
 * once the write retries ran out, so a gang member gave up instead of waiting. Losing to another
 * writer is contention; only real API failures are backend errors. (Empty annotation maps disappear
 * on the API server — Go's omitempty — so after every release the node is annotation-less again and
 * every first acquire takes the merge-patch path.)
 */
class LostRaceOnAnnotationlessNodeTest extends OnSharedEmulator {

  @BeforeEach
  void fresh() {
    k8s.clearFaults();
  }

  /** Another writer takes and releases the lock between our GET and every merge patch. */
  @Test
  void aMergePatchThatKeepsLosingToAnotherWriterIsContentionNotABackendError() throws Exception {
    String bare = cluster.bareNode(Cluster.unique("bare"));
    AtomicInteger otherWrites = new AtomicInteger();
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .pathMatching(".*/" + bare)
            .times(1000)
            .invoke(
                req -> {
                  // the other writer's acquire and release (the map disappears again when emptied)
                  k8s.mutate(
                      "nodes",
                      null,
                      bare,
                      o -> {
                        ((ObjectNode) o.get("metadata"))
                            .putObject("annotations")
                            .put(
                                Cluster.KEY,
                                "2026-08-01T06:00:00Z,other,pod-" + otherWrites.incrementAndGet());
                        return o;
                      });
                  k8s.mutate(
                      "nodes",
                      null,
                      bare,
                      o -> {
                        ((ObjectNode) o.get("metadata")).remove("annotations");
                        return o;
                      });
                }));
    AnnotationLockStore store =
        NodeAnnotationLockStore.builder(
                k8s.newApiClient(Duration.ofSeconds(5)), Duration.ofSeconds(2))
            .build();
    assertThat(store.createIfAbsent(bare, Cluster.KEY, "2026-08-01T06:00:00Z,me,pod"))
        .as("lost race")
        .isEqualTo(
            CasResult.notWritten(Optional.empty())); // the other writer's value came and went
    assertThat(cluster.lock(bare)).isEmpty();

    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .environment(Map.of())
            .retryPolicy(RetryPolicy.failFast())
            .watch(false)
            .build()) {
      assertThatThrownBy(() -> locks.nodeLock().acquire(bare, LockOwner.of("me", "pod")))
          .isInstanceOf(LockContentionException.class);
    }
    k8s.clearFaults();
    assertThat(store.createIfAbsent(bare, Cluster.KEY, "v"))
        .as("once the other writer stops")
        .isEqualTo(CasResult.written());
  }

  /**
   * The report's situation: several processes, annotation-less nodes, concurrent first acquires by
   * gang members (watch off). Every acquisition must succeed by waiting; none may fail with a
   * backend error. One write attempt per operation (maxAttempts 1) so that a lost merge-patch race
   * is not hidden behind retries in a bounded run.
   */
  @Test
  void concurrentFirstAcquiresOnAnnotationlessNodesOnlyEverWait() throws Exception {
    int processes = 4;
    int nodes = 3;
    int perProcess = 60;
    List<String> nodeNames = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      nodeNames.add(cluster.bareNode(Cluster.unique("bare")));
    }
    List<KubernetesLockStack> clients = new ArrayList<>();
    for (int p = 0; p < processes; p++) {
      clients.add(
          KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
              .environment(Map.of())
              .maxAttempts(1)
              .watch(false)
              .ownerLiveness(o -> dev.hamilock.core.OwnerLiveness.State.ALIVE)
              .retryPolicy(
                  RetryPolicy.builder()
                      .pollInterval(Duration.ofMillis(2))
                      .retryTimeout(Duration.ofSeconds(25))
                      .build())
              .build());
    }
    ExecutorService pool = Executors.newFixedThreadPool(processes * nodes);
    ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<String> overlaps = new ConcurrentLinkedQueue<>();
    Map<String, AtomicInteger> holders = new java.util.concurrent.ConcurrentHashMap<>();
    nodeNames.forEach(n -> holders.put(n, new AtomicInteger()));
    AtomicInteger acquired = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> tasks = new ArrayList<>();
    try {
      for (int p = 0; p < processes; p++) {
        for (String node : nodeNames) {
          KubernetesLockStack client = clients.get(p);
          int proc = p;
          tasks.add(
              pool.submit(
                  () -> {
                    go.await();
                    NodeLock lock = client.nodeLock();
                    for (int i = 0; i < perProcess; i++) {
                      LockOwner owner = LockOwner.of("p" + proc, "pod-" + i);
                      try {
                        client.acquirer().acquire(node, owner, true, List.of(lock));
                      } catch (NodeLockException e) {
                        failures.add(e);
                        continue;
                      }
                      if (holders.get(node).incrementAndGet() != 1) {
                        overlaps.add(node);
                      }
                      acquired.incrementAndGet();
                      holders.get(node).decrementAndGet();
                      lock.release(node, owner);
                    }
                    return null;
                  }));
        }
      }
      go.countDown();
      for (Future<?> f : tasks) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      clients.forEach(KubernetesLockStack::close);
    }
    assertThat(failures)
        .as(
            "acquisitions that gave up (%s of %s succeeded)",
            acquired.get(), processes * nodes * perProcess)
        .isEmpty();
    assertThat(overlaps).isEmpty();
    assertThat(acquired.get()).isEqualTo(processes * nodes * perProcess);
  }
}
