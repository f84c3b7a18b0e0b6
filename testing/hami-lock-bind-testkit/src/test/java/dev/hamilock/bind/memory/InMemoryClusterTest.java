package dev.hamilock.bind.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class InMemoryClusterTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void mergePatchSetsAndRemovesAnnotationsAndLabelsAndBumpsTheResourceVersion() throws Exception {
    ClusterPod p =
        cluster.addPod(
            PodView.builder("ns", "p").annotations(Map.of("keep", "1", "drop", "2")).build());

    ClusterPod after =
        cluster.patchPodMetadata(
            "ns",
            "p",
            MetadataPatch.builder()
                .setAnnotation("new", "3")
                .removeAnnotation("drop")
                .setLabel("l", "v")
                .build());

    assertThat(after.view().annotations())
        .containsOnly(Map.entry("keep", "1"), Map.entry("new", "3"));
    assertThat(after.view().labels()).containsOnly(Map.entry("l", "v"));
    assertThat(Long.parseLong(after.resourceVersion()))
        .isGreaterThan(Long.parseLong(p.resourceVersion()));
    assertThat(p.view().uid()).isNotBlank();
  }

  @Test
  void aPatchForAnotherIncarnationOrAMissingPodIsNotFound() {
    cluster.addPod(PodView.builder("ns", "p").build());
    assertThatThrownBy(
            () ->
                cluster.patchPodMetadata(
                    "ns", "p", MetadataPatch.builder().expectedUid("old").build()))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> assertThat(e.kind()).isEqualTo(ClusterException.Kind.NOT_FOUND));
    assertThatThrownBy(() -> cluster.patchPodMetadata("ns", "q", MetadataPatch.builder().build()))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> assertThat(e.kind()).isEqualTo(ClusterException.Kind.NOT_FOUND));
  }

  @Test
  void bindingBehavesLikeTheApiServer() throws Exception {
    String uid = cluster.addPod(PodView.builder("ns", "p").build()).view().uid();

    assertThat(cluster.bind("ns", "p", "other-uid", "", "n1").kind())
        .isEqualTo(BindingPostResult.Kind.NOT_FOUND);
    assertThat(cluster.bind("ns", "q", "", "", "n1").kind())
        .isEqualTo(BindingPostResult.Kind.NOT_FOUND);
    assertThat(cluster.bind("ns", "p", uid, "", "no-such-node").kind())
        .isEqualTo(BindingPostResult.Kind.BOUND);
    BindingPostResult again = cluster.bind("ns", "p", uid, "", "n2");
    assertThat(again.kind()).isEqualTo(BindingPostResult.Kind.ALREADY_BOUND);
    assertThat(again.boundNode()).contains("no-such-node");
    assertThat(cluster.readPod("ns", "p").orElseThrow().nodeName()).contains("no-such-node");
  }

  @Test
  void listsPodsByAllocationAnnotationAndByNodeNameInCreationOrder() throws Exception {
    cluster.addPod(
        PodView.builder("ns", "b").annotations(Map.of("hami.io/vgpu-node", "n1")).build());
    cluster.addPod(PodView.builder("ns", "a").build(), Optional.of("n1"));
    cluster.addPod(
        PodView.builder("ns", "c").annotations(Map.of("hami.io/vgpu-node", "n2")).build(),
        Optional.of("n1"));

    assertThat(cluster.listPodsAssignedTo("n1"))
        .extracting(p -> p.view().name())
        .containsExactly("b");
    assertThat(cluster.listPodsOnNode("n1"))
        .extracting(p -> p.view().name())
        .containsExactly("a", "c");
  }

  @Test
  void theLockStoreLivesInTheNodesAnnotations() throws Exception {
    cluster.addNode(NodeView.of("n1", Map.of("other", "x")));
    LockStore store = cluster.lockStore();

    assertThat(store.createIfAbsent("n1", "k", "v1")).isEqualTo(CasResult.written());
    assertThat(store.createIfAbsent("n1", "k", "v2")).isEqualTo(CasResult.found("v1"));
    assertThat(cluster.readNode("n1").orElseThrow().annotations())
        .containsEntry("k", "v1")
        .containsEntry("other", "x");
    assertThat(store.replaceIfEquals("n1", "k", "v2", "v3")).isEqualTo(CasResult.found("v1"));
    assertThat(store.replaceIfEquals("n1", "k", "v1", "v3")).isEqualTo(CasResult.written());
    assertThat(store.deleteIfEquals("n1", "k", "v1")).isFalse();
    assertThat(store.deleteIfEquals("n1", "k", "v3")).isTrue();
    assertThat(store.read("n1", "k")).isEmpty();
    assertThat(store.replaceIfEquals("n1", "k", "v3", "v4"))
        .isEqualTo(CasResult.notWritten(Optional.empty()));
    assertThatThrownBy(() -> store.read("gone", "k"))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.NOT_FOUND));
  }

  @Test
  void injectedFaultsFailBeforeOrAfterApplyingAndAreCounted() throws Exception {
    InMemoryCluster c =
        InMemoryCluster.builder()
            .faults(
                (op, target) ->
                    switch (op) {
                      case READ_NODE -> InMemoryCluster.Fault.FAIL_BEFORE;
                      case PATCH_POD -> InMemoryCluster.Fault.FAIL_AFTER;
                      default -> InMemoryCluster.Fault.NONE;
                    })
            .build();
    c.addNode(NodeView.of("n1", Map.of()));
    c.addPod(PodView.builder("ns", "p").build());

    assertThatThrownBy(() -> c.readNode("n1"))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> assertThat(e.kind()).isEqualTo(ClusterException.Kind.UNAVAILABLE));
    assertThatThrownBy(
            () ->
                c.patchPodMetadata(
                    "ns", "p", MetadataPatch.builder().setAnnotation("a", "1").build()))
        .isInstanceOf(ClusterException.class);
    assertThat(c.readPod("ns", "p").orElseThrow().view().annotations()).containsEntry("a", "1");
    assertThat(c.operationCount(InMemoryCluster.Operation.READ_NODE)).isEqualTo(1);
    assertThat(c.operationCount(InMemoryCluster.Operation.PATCH_POD)).isEqualTo(1);
    assertThat(c.operationCount(InMemoryCluster.Operation.READ_POD)).isEqualTo(1);
  }

  @Test
  void ownerLivenessFollowsThePods() throws Exception {
    String uid = cluster.addPod(PodView.builder("ns", "alive").build()).view().uid();
    cluster.addPod(PodView.builder("ns", "done").phase(PodView.Phase.SUCCEEDED).build());
    cluster.addPod(PodView.builder("ns", "going").deleting(true).build());
    OwnerLiveness l = cluster.ownerLiveness();

    assertThat(l.check(LockOwner.of("ns", "alive", uid))).isEqualTo(OwnerLiveness.State.ALIVE);
    assertThat(l.check(LockOwner.of("ns", "alive", "old-uid")))
        .isEqualTo(OwnerLiveness.State.NOT_FOUND);
    assertThat(l.check(LockOwner.of("ns", "missing"))).isEqualTo(OwnerLiveness.State.NOT_FOUND);
    assertThat(l.check(LockOwner.of("ns", "done"))).isEqualTo(OwnerLiveness.State.SUCCEEDED);
    assertThat(l.check(LockOwner.of("ns", "going"))).isEqualTo(OwnerLiveness.State.TERMINATING);
  }

  /** Every writer count 2–8, eight races each (56). */
  @Test
  void concurrentCreatesOnOneNodeHaveExactlyOneWinner() throws Exception {
    for (int race = 0; race < 8; race++) {
      for (int writers = 2; writers <= 8; writers++) {
        try {
          exactlyOneWinner(writers);
        } catch (AssertionError e) {
          throw new AssertionError(writers + " writers, race " + race + ": " + e.getMessage(), e);
        }
      }
    }
  }

  private static void exactlyOneWinner(int writers) throws Exception {
    InMemoryCluster c = InMemoryCluster.create();
    c.addNode(NodeView.of("n1", Map.of()));
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Callable<Boolean>> tasks = new ArrayList<>();
      for (int i = 0; i < writers; i++) {
        String v = "w" + i;
        tasks.add(() -> c.lockStore().createIfAbsent("n1", "k", v).isWritten());
      }
      int winners = 0;
      for (Future<Boolean> f : pool.invokeAll(tasks)) {
        winners += f.get() ? 1 : 0;
      }
      assertThat(winners).isEqualTo(1);
      assertThat(c.lockStore().read("n1", "k")).isPresent();
    } finally {
      pool.shutdownNow();
    }
  }
}
