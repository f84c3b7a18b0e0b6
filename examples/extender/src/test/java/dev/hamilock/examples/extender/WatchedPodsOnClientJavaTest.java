package dev.hamilock.examples.extender;

import static dev.hamilock.examples.extender.ExtenderFixtures.seed;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bind's re-fit reads its pod lists from the extender's pod informer watch (issue 25 item 2),
 * on client-java against the emulator: with the watch current, the list is the one a LIST at the
 * allocation's version answers and no LIST is sent; with the watch held up after a write, that
 * write's list is never answered from the store behind it, the reader lists, and once the watch
 * resumes the store is used again; a resume after compaction relists and the store still equals the
 * LIST.
 */
class WatchedPodsOnClientJavaTest {
  private static final String NS = "default"; // gang-training.yaml's pods

  private ApiServerEmulator k8s;
  private LogCapture log;
  private KubernetesCluster cluster;
  private WatchedCache cache;
  private final CountDownLatch resume = new CountDownLatch(1); // ends a held-up watch

  @BeforeEach
  void start() {
    log = LogCapture.start();
    k8s = ApiServerEmulator.builder().start();
    cluster =
        KubernetesCluster.create(
            k8s.apiClient(), Duration.ofSeconds(10), KubernetesCluster.DEFAULT_MAX_ATTEMPTS);
    cache = new WatchedCache(k8s.apiClient(), k8s.watchApiClient(), cluster);
  }

  @AfterEach
  void stop() throws InterruptedException {
    resume.countDown();
    cache.close();
    k8s.close();
    // the reflector of a watch released while the informers stop may report the closed call
    log.expect("WARN .*InformerFailureLog - cannot list and watch (pods|nodes) .*closed");
    log.expect("DEBUG .*InformerFailureLog - list and watch of (pods|nodes) failed");
    InformerStopLog.closeAfterInformersStopped(log);
  }

  /** Changes the object in the emulator; its new {@code resourceVersion}. */
  private String write(String resource, String ns, String name, Consumer<ObjectNode> change) {
    return k8s.mutate(
            resource,
            ns,
            name,
            o -> {
              change.accept(o);
              return o;
            })
        .path("metadata")
        .path("resourceVersion")
        .asText();
  }

  /** Annotates and labels the pod for {@code node} as HAMi's Filter (null: removes both). */
  private String assign(String pod, String node) {
    return write(
        "pods",
        NS,
        pod,
        p -> {
          for (String field : List.of("annotations", "labels")) {
            ObjectNode values = p.withObjectProperty("metadata").withObjectProperty(field);
            if (node == null) {
              values.remove(HamiAnnotations.VGPU_NODE);
            } else {
              values.put(HamiAnnotations.VGPU_NODE, node);
            }
          }
        });
  }

  /** Annotates the node; its new version. */
  private String touchNode(String node, String value) {
    return write(
        "nodes",
        null,
        node,
        n ->
            n.withObjectProperty("metadata")
                .withObjectProperty("annotations")
                .put("example.com/touched", value));
  }

  private static List<String> keysAndVersions(List<ClusterPod> pods) {
    return pods.stream().map(p -> p.key() + "@" + p.resourceVersion()).sorted().toList();
  }

  /**
   * The node at the version its lock was seen free: from the node informer once its copy is that
   * new, else one GET; the DRA snapshot from the cache (here, without DRA served, the fresh
   * reader's answer: none).
   */
  @Test
  void theNodeComesFromTheInformerOnceItsCopyIsAsNewAsTheLocksVersion() throws Exception {
    seed(k8s, "nodes.yaml");
    cache.start();
    awaitSynced(cache);
    ClusterReader reader = cache.bindReader(cluster, Duration.ofSeconds(5), Duration.ofSeconds(5));
    String v1 = touchNode("node-a", "1");
    k8s.resetCounters();
    assertThat(reader.readNode("node-a", v1).orElseThrow().annotations())
        .containsEntry("example.com/touched", "1");
    assertThat(k8s.requestCount("get", "nodes")).as("node GETs").isZero();

    k8s.holdUpNextWatch("nodes", resume);
    String v2 = touchNode("node-a", "2");
    k8s.resetCounters();
    assertThat(
            cache
                .bindReader(cluster, Duration.ofMillis(200), Duration.ofMillis(200))
                .readNode("node-a", v2)
                .orElseThrow()
                .annotations())
        .as("the write the node watch has not delivered")
        .containsEntry("example.com/touched", "2");
    assertThat(k8s.requestCount("get", "nodes")).as("node GETs").isEqualTo(1);
    assertThat(reader.readDraForFilter(List.of("node-a")).claims()).isEmpty();
  }

  private static void awaitSynced(WatchedCache cache) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!cache.synced() && System.nanoTime() < deadline) {
      Thread.sleep(10); // poll: the informers report no sync event
    }
    assertThat(cache.synced()).as("informers synced").isTrue();
  }

  @Test
  void aCurrentWatchAnswersWithoutAListAndAHeldUpWatchIsNeverUsed() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    cache.start();
    awaitSynced(cache);
    WatchedPods watched = cache.watchedPods();
    ClusterReader reader =
        watched.readingFirst(cluster, Duration.ofSeconds(5), Duration.ofSeconds(5));

    // current: the store reaches the write's version and answers, as a LIST at it would
    String v1 = assign("gang-worker-1", "node-a");
    k8s.resetCounters();
    List<ClusterPod> fromWatch = reader.listPodsAssignedTo("node-a", null, v1);
    assertThat(k8s.requestCount("list", "pods")).as("pod LISTs").isZero();
    assertThat(keysAndVersions(fromWatch))
        .containsExactly(NS + "/gang-worker-1@" + v1)
        .isEqualTo(keysAndVersions(cluster.listPodsAssignedTo("node-a", null, v1)));
    assertThat(watched.answered()).isEqualTo(1);

    // held up: the pod watch's next request blocks in the emulator until released
    k8s.holdUpNextWatch("pods", resume);
    String v2 = assign("gang-worker-2", "node-a");
    k8s.resetCounters();
    List<ClusterPod> listed =
        watched
            .readingFirst(cluster, Duration.ofMillis(200), Duration.ofMillis(200))
            .listPodsAssignedTo("node-a", null, v2);
    assertThat(keysAndVersions(listed))
        .as("the write the watch has not delivered is in the list")
        .containsExactly(NS + "/gang-worker-1@" + v1, NS + "/gang-worker-2@" + v2);
    assertThat(k8s.requestCount("list", "pods")).as("pod LISTs").isPositive();
    assertThat(watched.fellBack()).isEqualTo(1);
    assertThat(log.expect("WatchedPods - node node-a: the pod watch had not reached version " + v2))
        .hasSize(1);

    // resumed: the watch delivers both writes and answers again
    resume.countDown();
    String v3 = assign("gang-worker-3", "node-a");
    k8s.resetCounters();
    assertThat(keysAndVersions(reader.listPodsAssignedTo("node-a", null, v3)))
        .containsExactly(
            NS + "/gang-worker-1@" + v1, NS + "/gang-worker-2@" + v2, NS + "/gang-worker-3@" + v3);
    assertThat(k8s.requestCount("list", "pods")).as("pod LISTs").isZero();
    assertThat(watched.answered()).isEqualTo(2);
  }

  /**
   * The pod watch resumed after compaction gets ERROR 410 and the reflector relists consistently;
   * meanwhile an annotation moved between nodes, one was removed, a pod was bound and one deleted:
   * the store's answer at a later write equals a LIST's for both nodes, and comes from the store (a
   * reviewer's attack, breaker8, against 6393ba9: it held).
   */
  @Test
  void aCompactedResumeRelistsAndTheStoreStillEqualsTheList() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    cache.start();
    awaitSynced(cache);
    WatchedPods watched = cache.watchedPods();
    ClusterReader reader =
        watched.readingFirst(cluster, Duration.ofSeconds(8), Duration.ofSeconds(8));
    assign("gang-worker-1", "node-a");
    assign("gang-worker-2", "node-a");
    assign("gang-worker-3", "node-a");
    String v0 = assign("gang-worker-4", "node-b");
    assertThat(reader.listPodsAssignedTo("node-a", null, v0)).hasSize(3);

    k8s.holdUpNextWatch("pods", resume);
    assign("gang-worker-1", "node-b"); // moved
    assign("gang-worker-2", null); // removed
    write("pods", NS, "gang-worker-3", p -> p.withObjectProperty("spec").put("nodeName", "node-a"));
    k8s.delete("pods", NS, "gang-worker-4");
    k8s.compact(); // the held-up watch resumes from a version before this: ERROR 410
    resume.countDown();

    String v = assign("gang-worker-3", "node-a");
    for (String node : List.of("node-a", "node-b")) {
      List<ClusterPod> fromStore = reader.listPodsAssignedTo(node, null, v);
      assertThat(keysAndVersions(fromStore))
          .as(node)
          .isEqualTo(keysAndVersions(cluster.listPodsAssignedTo(node, null, v)));
    }
    assertThat(watched.fellBack()).as("answered from the store").isZero();
  }
}
