package dev.hamilock.examples.extender;

import static dev.hamilock.examples.extender.ExtenderFixtures.seed;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The pod watch resumed after its history was compacted (ERROR 410, the reflector relists
 * consistently), with an annotation moved between nodes, one removed, a pod bound and a pod deleted
 * while the watch was held up: the store's answer at a later write equals a LIST's at that write,
 * for both nodes, and comes from the store (written by a reviewer, breaker8, against 6393ba9: it
 * held).
 */
class WatchedPodsRelistTest {
  private static final String NS = "default";

  private ApiServerEmulator k8s;
  private LogCapture log;

  @BeforeEach
  void start() {
    log = LogCapture.start();
    k8s = ApiServerEmulator.builder().eventHistoryLimit(2).start();
  }

  @AfterEach
  void stop() throws InterruptedException {
    k8s.close();
    InformerStopLog.closeAfterInformersStopped(log);
  }

  private String assign(String pod, String node) {
    return k8s.mutate(
            "pods",
            NS,
            pod,
            p -> {
              if (node == null) {
                p.withObjectProperty("metadata")
                    .withObjectProperty("annotations")
                    .remove(HamiAnnotations.VGPU_NODE);
                p.withObjectProperty("metadata")
                    .withObjectProperty("labels")
                    .remove(HamiAnnotations.VGPU_NODE);
              } else {
                p.withObjectProperty("metadata")
                    .withObjectProperty("annotations")
                    .put(HamiAnnotations.VGPU_NODE, node);
                p.withObjectProperty("metadata")
                    .withObjectProperty("labels")
                    .put(HamiAnnotations.VGPU_NODE, node);
              }
              return p;
            })
        .path("metadata")
        .path("resourceVersion")
        .asText();
  }

  private String bind(String pod, String node) {
    return k8s.mutate(
            "pods",
            NS,
            pod,
            p -> {
              p.withObjectProperty("spec").put("nodeName", node);
              return p;
            })
        .path("metadata")
        .path("resourceVersion")
        .asText();
  }

  private static List<String> keysAndVersions(List<ClusterPod> pods) {
    return pods.stream().map(p -> p.key() + "@" + p.resourceVersion()).sorted().toList();
  }

  @Test
  void aCompactedResumeRelistsAndTheStoreStillEqualsTheList() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    KubernetesCluster cluster =
        KubernetesCluster.create(
            k8s.apiClient(), Duration.ofSeconds(10), KubernetesCluster.DEFAULT_MAX_ATTEMPTS);
    WatchedCache cache = new WatchedCache(k8s.apiClient(), k8s.watchApiClient(), cluster);
    CountDownLatch resume = new CountDownLatch(1);
    try {
      cache.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!cache.synced() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(cache.synced()).isTrue();
      WatchedPods watched = cache.watchedPods();
      ClusterReader reader =
          watched.readingFirst(cluster, Duration.ofSeconds(8), Duration.ofSeconds(8));
      assign("gang-worker-1", "node-a");
      assign("gang-worker-2", "node-a");
      assign("gang-worker-3", "node-a");
      String v0 = assign("gang-worker-4", "node-b");
      assertThat(reader.listPodsAssignedTo("node-a", null, v0)).hasSize(3);

      AtomicInteger heldUp = new AtomicInteger();
      k8s.addFault(
          FaultRule.matching()
              .verb("watch")
              .resource("pods")
              .times(1)
              .invoke(
                  r -> {
                    heldUp.incrementAndGet();
                    try {
                      resume.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }));
      k8s.dropWatches();
      while (heldUp.get() == 0) {
        Thread.sleep(5);
      }
      assign("gang-worker-1", "node-b"); // moved
      assign("gang-worker-2", null); // removed
      bind("gang-worker-3", "node-a"); // bound
      k8s.delete("pods", NS, "gang-worker-4"); // deleted
      k8s.compact();
      k8s.compact();
      k8s.compact();
      resume.countDown();

      String v = assign("gang-worker-3", "node-a");
      for (String node : List.of("node-a", "node-b")) {
        List<ClusterPod> fromStore = reader.listPodsAssignedTo(node, null, v);
        assertThat(keysAndVersions(fromStore))
            .as(node)
            .isEqualTo(keysAndVersions(cluster.listPodsAssignedTo(node, null, v)));
      }
      assertThat(watched.fellBack()).as("answered from the store").isZero();
    } finally {
      resume.countDown();
      cache.close();
    }
  }
}
