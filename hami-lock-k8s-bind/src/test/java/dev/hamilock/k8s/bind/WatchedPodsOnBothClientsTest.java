package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.fabric8.Fabric8WatchTransport;
import dev.hamilock.fabric8.bind.Fabric8Cluster;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.k8s.watch.KubeWatchTransport;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.TestPod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bind's re-fit pod lists from {@link WatchedPods} fed by core's {@link ListAndWatch} of all
 * pods, on both clients' transports against the emulator (issue 25 item 2, "a test on both
 * backends"): a current watch answers with no LIST and the same pods and versions as a LIST at that
 * version; a watch held up after a write is never used for it (the reader lists, and the list holds
 * the write); once it resumes the store answers again; a resume after compaction (ERROR 410)
 * relists and the store equals a LIST for both nodes. One pod carries {@code spec.priority: 0}, as
 * every pod of a real API server: read as a double, the views would refuse it and the store never
 * answer.
 */
class WatchedPodsOnBothClientsTest {
  private static final String NS = "default";

  private ApiServerEmulator k8s;
  private KubernetesClient fabric8;
  private ListAndWatch watch;
  private final CountDownLatch resume = new CountDownLatch(1); // ends a held-up watch

  @BeforeEach
  void start() throws Exception {
    k8s = ApiServerEmulator.start();
    fabric8 = Fabric8Replicas.client(k8s);
  }

  @AfterEach
  void stop() {
    resume.countDown();
    if (watch != null) {
      watch.close();
    }
    fabric8.close();
    k8s.close();
  }

  /** The pods watched through {@code client}'s transport, synced, and that client's reader. */
  private ClusterReader watched(String client, WatchedPods pods) throws InterruptedException {
    ListAndWatch.Transport transport =
        client.equals("fabric8")
            ? Fabric8WatchTransport.create(fabric8)
            : KubeWatchTransport.create(k8s.apiClient(), Duration.ofSeconds(10));
    watch = ListAndWatch.of("pod watch", "/api/v1/pods", transport, pods.sink()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (pods.version() < 0 && System.nanoTime() < deadline) {
      Thread.sleep(5); // poll: the first listing
    }
    assertThat(pods.version()).as("%s: listed", client).isPositive();
    return client.equals("fabric8")
        ? Fabric8Cluster.create(fabric8)
        : KubernetesCluster.create(k8s.newApiClient(Duration.ofSeconds(10)));
  }

  /** Three pods, one of them with {@code spec.priority: 0}. */
  private void seed() {
    for (String name : List.of("w-1", "w-2", "w-3")) {
      k8s.createPod(TestPod.named(NS, name).container("main", "busybox"));
    }
    write("w-1", p -> p.withObjectProperty("spec").put("priority", 0));
  }

  private String write(String pod, Consumer<ObjectNode> change) {
    return k8s.mutate(
            "pods",
            NS,
            pod,
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

  private static List<String> keysAndVersions(List<ClusterPod> pods) {
    return pods.stream().map(p -> p.key() + "@" + p.resourceVersion()).sorted().toList();
  }

  @ParameterizedTest
  @ValueSource(strings = {"client-java", "fabric8"})
  void aCurrentWatchAnswersWithoutAListAndAHeldUpWatchIsNeverUsed(String client) throws Exception {
    seed();
    WatchedPods watched = new WatchedPods();
    ClusterReader cluster = watched(client, watched);
    ClusterReader reader =
        watched.readingFirst(cluster, Duration.ofSeconds(5), Duration.ofSeconds(5));

    String v1 = assign("w-1", "node-a");
    k8s.resetCounters();
    List<ClusterPod> fromWatch = reader.listPodsAssignedTo("node-a", null, v1);
    assertThat(k8s.requestCount("list", "pods")).as("pod LISTs").isZero();
    assertThat(keysAndVersions(fromWatch))
        .containsExactly(NS + "/w-1@" + v1)
        .isEqualTo(keysAndVersions(cluster.listPodsAssignedTo("node-a", null, v1)));
    assertThat(watched.answered()).isEqualTo(1);

    k8s.holdUpNextWatch("pods", resume);
    String v2 = assign("w-2", "node-a");
    k8s.resetCounters();
    List<ClusterPod> listed =
        watched
            .readingFirst(cluster, Duration.ofMillis(200), Duration.ofMillis(200))
            .listPodsAssignedTo("node-a", null, v2);
    assertThat(keysAndVersions(listed))
        .as("the write the watch has not delivered is in the list")
        .containsExactly(NS + "/w-1@" + v1, NS + "/w-2@" + v2);
    assertThat(k8s.requestCount("list", "pods")).as("pod LISTs").isPositive();
    assertThat(watched.fellBack()).isEqualTo(1);

    resume.countDown();
    String v3 = assign("w-3", "node-a");
    k8s.resetCounters();
    assertThat(keysAndVersions(reader.listPodsAssignedTo("node-a", null, v3)))
        .containsExactly(NS + "/w-1@" + v1, NS + "/w-2@" + v2, NS + "/w-3@" + v3);
    assertThat(k8s.requestCount("list", "pods")).as("pod LISTs").isZero();
    assertThat(watched.answered()).isEqualTo(2);
  }

  @ParameterizedTest
  @ValueSource(strings = {"client-java", "fabric8"})
  void aCompactedResumeRelistsAndTheStoreStillEqualsTheList(String client) throws Exception {
    seed();
    k8s.createPod(TestPod.named(NS, "w-4").container("main", "busybox"));
    WatchedPods watched = new WatchedPods();
    ClusterReader cluster = watched(client, watched);
    ClusterReader reader =
        watched.readingFirst(cluster, Duration.ofSeconds(8), Duration.ofSeconds(8));
    assign("w-1", "node-a");
    assign("w-2", "node-a");
    assign("w-3", "node-a");
    String v0 = assign("w-4", "node-b");
    assertThat(reader.listPodsAssignedTo("node-a", null, v0)).hasSize(3);
    long listings = watch.relistCount();

    k8s.holdUpNextWatch("pods", resume);
    assign("w-1", "node-b"); // moved
    assign("w-2", null); // removed
    write("w-3", p -> p.withObjectProperty("spec").put("nodeName", "node-a")); // bound
    k8s.delete("pods", NS, "w-4");
    k8s.compact(); // the held-up watch resumes from a version before this: ERROR 410
    resume.countDown();

    String v = assign("w-3", "node-a");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (watched.version() < Long.parseLong(v) && System.nanoTime() < deadline) {
      Thread.sleep(5); // poll: the relist after the 410, then the write's event
    }
    assertThat(watch.relistCount()).as("listings after the 410").isEqualTo(listings + 1);
    for (String node : List.of("node-a", "node-b")) {
      k8s.resetCounters(); // the relist and the LISTs compared with were pod LISTs
      List<ClusterPod> fromStore = reader.listPodsAssignedTo(node, null, v);
      assertThat(k8s.requestCount("list", "pods")).as("%s: pod LISTs", node).isZero();
      assertThat(keysAndVersions(fromStore))
          .as(node)
          .isEqualTo(keysAndVersions(cluster.listPodsAssignedTo(node, null, v)));
    }
  }
}
