package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Props;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * The device-plugin hand-off under random interleavings of a binder's steps and kubelet Allocate
 * calls on one node (the run behind the reported leak: Allocate while the lock owner was locked but
 * not yet annotated/bound, with an already-served pod listed on the node).
 *
 * <p>Each of 1–4 pods goes through HAMi's Bind steps one at a time — lock ({@link
 * NodeLock#acquire}, contention keeps it waiting), annotate (to-allocate/allocated, {@code
 * hami.io/vgpu-node}, {@code bind-phase: allocating}, {@code bind-time}), bind — interleaved with
 * {@link DevicePluginHandoff#allocateAll} and {@link DevicePluginHandoff#fail} calls. The kubelet
 * admits bound pods in binding order, so an Allocate call is on behalf of the first bound pod not
 * yet handed off, or of no pod of ours (a stray call: kubelet admitting something else, the
 * reported run). Optionally a pod served earlier ({@code bind-phase: success}) still lists a
 * pending entry, as a re-run Filter leaves it. Properties:
 *
 * <ul>
 *   <li>a call serves only the pod the kubelet is admitting, with exactly that pod's entries, and a
 *       stray call serves (and fails, and releases) nothing;
 *   <li>a lock is released only by the call completing or failing its holder, once per pod;
 *   <li>after driving every pod to bound and handed off, the node lock is free.
 * </ul>
 */
class HandoffInterleavingProperties {

  enum Kind {
    LOCK,
    ANNOTATE,
    BIND,
    ALLOCATE,
    FAIL
  }

  record Step(Kind kind, int pod) {}

  enum State {
    NEW,
    LOCKED,
    ANNOTATED,
    BOUND,
    DONE
  }

  /**
   * 0–40 steps: lock, annotate, bind 3 each, Allocate 4, injected failure 1 (weights), for pod 0–3.
   */
  static Gen<List<Step>> steps() {
    Gen<Kind> kind =
        Generate.frequency(
            Pair.of(3, Generate.constant(Kind.LOCK)),
            Pair.of(3, Generate.constant(Kind.ANNOTATE)),
            Pair.of(3, Generate.constant(Kind.BIND)),
            Pair.of(4, Generate.constant(Kind.ALLOCATE)),
            Pair.of(1, Generate.constant(Kind.FAIL)));
    return lists().of(kind.zip(integers().between(0, 3), Step::new)).ofSizeBetween(0, 40);
  }

  /**
   * 400 examples: 1–4 pods, 1–2 containers each (a list of 1–2 counts), a stale served neighbour or
   * not.
   */
  @Test
  void allocateServesOnlyTheAdmittedPodAndNoLockOutlivesTheHandoffs() {
    Props.qt(400)
        .forAll(
            integers().between(1, 4),
            lists().of(integers().between(1, 2)).ofSizeBetween(1, 2),
            booleans().all(),
            steps())
        .checkAssert(
            (podCount, containerCounts, stale, steps) ->
                Props.unchecked(
                    () -> servesOnlyTheAdmittedPod(podCount, containerCounts, stale, steps)));
  }

  private static void servesOnlyTheAdmittedPod(
      int podCount, List<Integer> containerCounts, boolean staleServedNeighbour, List<Step> steps)
      throws Exception {
    Run run = new Run(podCount, containerCounts, staleServedNeighbour);
    for (Step s : steps) {
      run.step(s.kind(), s.pod() % podCount);
    }
    // drive everything to completion: each pod's next binder step, then kubelet's Allocate
    for (int round = 0; round < 8 * podCount && !run.allDone(); round++) {
      for (int i = 0; i < podCount; i++) {
        run.step(
            switch (run.state[i]) {
              case NEW -> Kind.LOCK;
              case LOCKED -> Kind.ANNOTATE;
              case ANNOTATED -> Kind.BIND;
              case BOUND, DONE -> Kind.ALLOCATE;
            },
            i);
      }
      run.step(Kind.ALLOCATE, 0);
    }

    assertThat(run.allDone()).as("every pod bound and handed off: %s", run.log).isTrue();
    assertThat(lockValue(run.cluster, "n1"))
        .as("node lock after the last hand-off: %s", run.log)
        .isNull();
    for (int i = 0; i < podCount; i++) {
      assertThat(run.releases[i]).as("releases of p%d's lock: %s", i, run.log).isEqualTo(1);
    }
    if (staleServedNeighbour) {
      assertThat(Fixtures.annotations(run.cluster, "old"))
          .as("the served neighbour is never touched")
          .containsEntry("hami.io/bind-phase", "success")
          .containsEntry(TO_ALLOCATE, run.staleEntries);
    }
  }

  /** One node, its binder-side lock, the hand-off, and the model of each pod's progress. */
  private static final class Run {
    final InMemoryCluster cluster = InMemoryCluster.create();
    final NodeLock binderLock = Fixtures.lock(cluster, LOCK_KEY);
    final DevicePluginHandoff plugin = Fixtures.handoff(cluster);
    final State[] state;
    final String[] uid;
    final List<List<List<ContainerDevice>>> entries = new ArrayList<>();
    final int[] releases;
    final Deque<Integer> admitted = new ArrayDeque<>();
    final List<String> log = new ArrayList<>();
    String staleEntries;

    Run(int pods, List<Integer> containerCounts, boolean staleServedNeighbour) throws Exception {
      cluster.addNode(node("n1", 2, 15360));
      state = new State[pods];
      uid = new String[pods];
      releases = new int[pods];
      for (int i = 0; i < pods; i++) {
        int containers = containerCounts.get(i % containerCounts.size());
        List<List<ContainerDevice>> perContainer = new ArrayList<>();
        List<dev.hamilock.device.spi.view.ContainerView> views = new ArrayList<>();
        for (int c = 0; c < containers; c++) {
          int mem = 1000 + 100 * i + 10 * c; // unique per pod and container: a swap is visible
          perContainer.add(List.of(ContainerDevice.of(gpu("n1", c), "NVIDIA", mem, 10 + i)));
          views.add(Fixtures.container("c" + c, 1, mem, 10 + i));
        }
        entries.add(perContainer);
        state[i] = State.NEW;
        uid[i] =
            cluster.addPod(PodView.builder(NS, "p" + i).containers(views).build()).view().uid();
      }
      if (staleServedNeighbour) {
        staleEntries =
            PodDevicesCodec.encode(
                List.of(List.of(ContainerDevice.of(gpu("n1", 0), "NVIDIA", 999, 99))));
        cluster.addPod(Fixtures.pod("old", 1, 999, 99), Optional.of("n1"));
        cluster.patchPodMetadata(
            NS,
            "old",
            MetadataPatch.builder()
                .setAnnotation(TO_ALLOCATE, staleEntries)
                .setAnnotation("hami.io/vgpu-node", "n1")
                .setAnnotation("hami.io/bind-phase", "success")
                .setAnnotation("hami.io/bind-time", "1")
                .build());
      }
    }

    boolean allDone() {
      for (State s : state) {
        if (s != State.DONE) {
          return false;
        }
      }
      return true;
    }

    void step(Kind kind, int i) throws Exception {
      log.add(kind + (kind == Kind.ALLOCATE || kind == Kind.FAIL ? "" : " p" + i));
      switch (kind) {
        case LOCK -> {
          if (state[i] == State.NEW) {
            try {
              binderLock.acquire("n1", LockOwner.of(NS, "p" + i, uid[i]));
              state[i] = State.LOCKED;
            } catch (LockContentionException e) {
              log.add("  contention");
            }
          }
        }
        case ANNOTATE -> {
          if (state[i] == State.LOCKED) {
            String text = PodDevicesCodec.encode(entries.get(i));
            cluster.patchPodMetadata(
                NS,
                "p" + i,
                MetadataPatch.builder()
                    .expectedUid(uid[i])
                    .setAnnotation(TO_ALLOCATE, text)
                    .setAnnotation(Fixtures.ALLOCATED, text)
                    .setAnnotation("hami.io/vgpu-node", "n1")
                    .setLabel("hami.io/vgpu-node", "n1")
                    .setAnnotation("hami.io/bind-phase", "allocating")
                    .setAnnotation("hami.io/bind-time", "1")
                    .build());
            state[i] = State.ANNOTATED;
          }
        }
        case BIND -> {
          if (state[i] == State.ANNOTATED) {
            assertThat(cluster.bind(NS, "p" + i, uid[i], "", "n1").kind())
                .isEqualTo(BindingPostResult.Kind.BOUND);
            state[i] = State.BOUND;
            admitted.add(i);
          }
        }
        case ALLOCATE, FAIL -> handoff(kind);
      }
    }

    /**
     * One kubelet Allocate on behalf of the first admitted pod not yet handed off (or a stray
     * call).
     */
    private void handoff(Kind kind) throws Exception {
      Integer admitting = admitted.peekFirst();
      String lockBefore = lockValue(cluster, "n1");
      HandoffResult r =
          kind == Kind.FAIL ? plugin.fail("n1", "injected") : plugin.allocateAll("n1");
      log.add(
          "  -> " + r.status() + " " + r.pod().map(LockOwner::name).orElse("") + " " + r.reason());
      boolean servesSomeone =
          r.status() == HandoffResult.Status.COMPLETED
              || r.status() == HandoffResult.Status.PARTIAL
              || r.status() == HandoffResult.Status.FAILED;
      if (!servesSomeone) {
        assertThat(r.status())
            .as("%s", log)
            .isIn(HandoffResult.Status.NO_POD, HandoffResult.Status.OWNER_NOT_READY);
        assertThat(admitting)
            .as("a bound pod waits for Allocate but nothing was served: %s", log)
            .isNull();
        assertThat(lockValue(cluster, "n1"))
            .as("a call serving nobody changes no lock: %s", log)
            .isEqualTo(lockBefore);
        return;
      }
      assertThat(admitting)
          .as("Allocate with no admitted pod served %s: %s", r.pod(), log)
          .isNotNull();
      int i = admitting;
      assertThat(r.pod()).as("served pod: %s", log).contains(LockOwner.of(NS, "p" + i, uid[i]));
      if (r.status() == HandoffResult.Status.COMPLETED) {
        assertThat(r.handedOut())
            .as("p%d's own entries: %s", i, log)
            .extracting(ContainerAllocation::devices)
            .containsExactlyElementsOf(entries.get(i));
      } else {
        assertThat(r.status()).as("%s", log).isEqualTo(HandoffResult.Status.FAILED);
        assertThat(kind).as("only an injected failure fails: %s", log).isEqualTo(Kind.FAIL);
      }
      assertThat(r.lockReleased())
          .as("p%d held the lock and its hand-off ended: %s", i, log)
          .isTrue();
      assertThat(lockBefore).as("%s", log).endsWith("," + NS + ",p" + i);
      assertThat(lockValue(cluster, "n1")).isNull();
      releases[i]++;
      admitted.removeFirst();
      state[i] = State.DONE;
    }
  }
}
