package dev.hamilock.bind.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Props;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The re-fit's pod lists from the pod watch (issue 25 item 2): a store behind the allocation's
 * version is never used, the list goes to the reader instead, and replays after a re-watch or a
 * lagging listing never show a state older than the version held.
 */
class WatchedPodsTest {

  private static final Duration SHORT = Duration.ofMillis(20);

  /** A pod named {@code name} at {@code version}, annotated for {@code node} (null: none). */
  private static ClusterPod pod(String name, String node, String boundTo, long version) {
    PodView.Builder b = PodView.builder("ns", name);
    if (node != null) {
      b.annotations(Map.of(HamiAnnotations.VGPU_NODE, node));
    }
    return new ClusterPod(b.build(), Optional.ofNullable(boundTo), Long.toString(version));
  }

  /** A reader that answers every pod list with one pod named {@code listed}, counting calls. */
  private static ClusterReader listing(AtomicInteger lists) {
    return listing(lists, new CountDownLatch(0));
  }

  /** {@link #listing(AtomicInteger)} whose lists, once counted, wait for {@code answer}. */
  private static ClusterReader listing(AtomicInteger lists, CountDownLatch answer) {
    return (ClusterReader)
        Proxy.newProxyInstance(
            WatchedPodsTest.class.getClassLoader(),
            new Class<?>[] {ClusterReader.class},
            (proxy, method, args) -> {
              if (!method.getName().equals("listPodsAssignedTo")) {
                throw new AssertionError("unexpected read " + method.getName());
              }
              lists.incrementAndGet();
              answer.await();
              return List.of(pod("listed", (String) args[0], null, 1));
            });
  }

  private static List<String> names(List<ClusterPod> pods) {
    return pods.stream().map(p -> p.view().name()).toList();
  }

  @Test
  void theWatchAtTheAllocationsVersionAnswersWithoutAList() throws Exception {
    WatchedPods pods = new WatchedPods();
    AtomicInteger lists = new AtomicInteger();
    ClusterReader reader = pods.readingFirst(listing(lists), SHORT, SHORT);
    pods.listed("10", List.of(pod("a", "n1", "n1", 7), pod("plain", null, "n1", 8)));
    pods.changed(pod("b", "n1", null, 11), false);
    pods.changed(pod("c", "n2", null, 12), false);

    assertThat(names(reader.listPodsAssignedTo("n1", null, "11"))).containsExactly("a", "b");
    assertThat(names(reader.listPodsAssignedTo("n2", null, "12"))).containsExactly("c");
    assertThat(lists).hasValue(0);
    assertThat(pods.answered()).isEqualTo(2);
  }

  /** The mutant answering whatever the store holds fails here: "b" would be missing. */
  @Test
  void aWatchBehindTheAllocationsVersionIsNeverUsedTheReaderListsInstead() throws Exception {
    WatchedPods pods = new WatchedPods();
    AtomicInteger lists = new AtomicInteger();
    ClusterReader reader = pods.readingFirst(listing(lists), SHORT, SHORT);
    pods.listed("10", List.of(pod("a", "n1", "n1", 7)));

    // the allocation PATCH of "b" came back at 11; the watch has not delivered it
    assertThat(names(reader.listPodsAssignedTo("n1", null, "11"))).containsExactly("listed");
    assertThat(lists).hasValue(1);
    assertThat(pods.fellBack()).isEqualTo(1);
    assertThat(pods.answered()).isZero();
  }

  @Test
  void anEventArrivingWhileTheReFitWaitsAnswersIt() throws Exception {
    WatchedPods pods = new WatchedPods();
    AtomicInteger lists = new AtomicInteger();
    ClusterReader reader =
        pods.readingFirst(listing(lists), Duration.ofSeconds(30), Duration.ofSeconds(30));
    pods.listed("10", List.of());
    CompletableFuture<List<ClusterPod>> read = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                read.complete(reader.listPodsAssignedTo("n1", null, "11"));
              } catch (Throwable e) {
                read.completeExceptionally(e);
              }
            });
    t.start();
    while (t.getState() != Thread.State.TIMED_WAITING) {
      assertThat(read).isNotDone();
      Thread.onSpinWait();
    }
    pods.changed(pod("b", "n1", null, 11), false);
    // without the event's wake-up the read would wait its 30 s, then list
    assertThat(names(read.get(10, TimeUnit.SECONDS))).containsExactly("b");
    assertThat(lists).hasValue(0);
  }

  /** A new thread per task: the hedged list runs beside the waiting caller. */
  private static final Executor THREADS = r -> new Thread(r).start();

  /** The list of n1 at version 11, read on another thread, hedging on {@link #THREADS}. */
  private static CompletableFuture<List<ClusterPod>> readAsync(ClusterReader reader) {
    return readAsync(reader, THREADS);
  }

  /** The list of n1 at version 11, read on another thread, hedging on {@code executor}. */
  private static CompletableFuture<List<ClusterPod>> readAsync(
      ClusterReader reader, Executor executor) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return reader.listPodsAssignedTo("n1", executor, "11");
          } catch (ClusterException e) {
            throw new IllegalStateException(e);
          }
        });
  }

  /** Without the list's wake-up the caller would wait the watch's 30 s; the test allows 10. */
  @Test
  void aWatchThatLagsLosesToTheHedgedListAsSoonAsItIsAnswered() throws Exception {
    WatchedPods pods = new WatchedPods();
    AtomicInteger lists = new AtomicInteger();
    ClusterReader reader = pods.readingFirst(listing(lists), Duration.ZERO, Duration.ofSeconds(30));
    pods.listed("10", List.of());
    CompletableFuture<List<ClusterPod>> read = readAsync(reader);
    assertThat(names(read.get(10, TimeUnit.SECONDS))).containsExactly("listed");
    assertThat(lists).hasValue(1);
    assertThat(pods.fellBack()).isEqualTo(1);
  }

  /** Without the check that the executor took the list, the caller would wait the watch's 30 s. */
  @Test
  void anExecutorThatRejectsTheHedgedListHasTheCallerListAtOnce() throws Exception {
    WatchedPods pods = new WatchedPods();
    AtomicInteger lists = new AtomicInteger();
    ClusterReader reader = pods.readingFirst(listing(lists), Duration.ZERO, Duration.ofSeconds(30));
    pods.listed("10", List.of());
    Executor rejecting =
        r -> {
          throw new java.util.concurrent.RejectedExecutionException("full");
        };
    assertThat(names(readAsync(reader, rejecting).get(10, TimeUnit.SECONDS)))
        .containsExactly("listed");
    assertThat(lists).hasValue(1);
  }

  @Test
  void theWatchWinsOverAHedgedListStillInFlight() throws Exception {
    WatchedPods pods = new WatchedPods();
    AtomicInteger lists = new AtomicInteger();
    CountDownLatch answer = new CountDownLatch(1);
    ClusterReader reader =
        pods.readingFirst(listing(lists, answer), Duration.ZERO, Duration.ofSeconds(30));
    pods.listed("10", List.of());
    try {
      CompletableFuture<List<ClusterPod>> read = readAsync(reader);
      while (lists.get() == 0) {
        assertThat(read).isNotDone();
        Thread.onSpinWait(); // until the hedged list is in flight
      }
      pods.changed(pod("b", "n1", null, 11), false);
      assertThat(names(read.get(10, TimeUnit.SECONDS))).containsExactly("b");
      assertThat(pods.answered()).isEqualTo(1);
    } finally {
      answer.countDown();
    }
  }

  /**
   * A hedged list the executor has not started when the watch answers is never sent (without the
   * cancel, the queued task would still list once it ran).
   */
  @Test
  void theWatchWinsOverAHedgedListStillQueuedAndItIsNeverSent() throws Exception {
    WatchedPods pods = new WatchedPods();
    AtomicInteger lists = new AtomicInteger();
    ClusterReader reader = pods.readingFirst(listing(lists), Duration.ZERO, Duration.ofSeconds(30));
    pods.listed("10", List.of());
    java.util.concurrent.BlockingQueue<Runnable> queued =
        new java.util.concurrent.LinkedBlockingQueue<>();
    CompletableFuture<List<ClusterPod>> read = readAsync(reader, queued::add);
    Runnable hedgedList = queued.poll(10, TimeUnit.SECONDS);
    assertThat(hedgedList).as("the hedged list was handed to the executor").isNotNull();
    pods.changed(pod("b", "n1", null, 11), false);
    assertThat(names(read.get(10, TimeUnit.SECONDS))).containsExactly("b");
    hedgedList.run(); // the executor gets to it only now
    assertThat(lists).as("lists sent").hasValue(0);
  }

  @Test
  void anInterruptedWaitIsTypedAndKeepsTheFlag() {
    WatchedPods pods = new WatchedPods();
    ClusterReader reader =
        pods.readingFirst(
            listing(new AtomicInteger()), Duration.ofSeconds(30), Duration.ofSeconds(30));
    Thread.currentThread().interrupt();
    try {
      reader.listPodsAssignedTo("n1", null, "11");
      throw new AssertionError("not interrupted");
    } catch (ClusterException e) {
      assertThat(e.kind()).isEqualTo(ClusterException.Kind.INTERRUPTED);
      assertThat(Thread.interrupted()).isTrue();
    }
  }

  @Test
  void nothingIsProvenBeforeAListingAfterALostEventOrForAVersionThatIsNoInteger() throws Exception {
    WatchedPods pods = new WatchedPods();
    assertThat(pods.assignedTo("n1", "1", Duration.ZERO)).isEmpty(); // never listed
    pods.changed(pod("b", "n1", null, 11), false);
    assertThat(pods.assignedTo("n1", "1", Duration.ZERO)).isEmpty(); // events before a listing

    pods.listed("10", List.of(pod("a", "n1", null, 9)));
    assertThat(pods.assignedTo("n1", "10", Duration.ZERO)).isPresent();
    assertThat(pods.assignedTo("n1", "x10", Duration.ZERO)).isEmpty();
    pods.lost("a pod the views refused");
    assertThat(pods.assignedTo("n1", "10", Duration.ZERO)).isEmpty();
    pods.changed(pod("c", "n1", null, 12), false);
    assertThat(pods.assignedTo("n1", "10", Duration.ZERO)).isEmpty();

    pods.listed("12", List.of(pod("c", "n1", null, 12)));
    assertThat(names(pods.assignedTo("n1", "12", Duration.ZERO).orElseThrow()))
        .containsExactly("c");
    pods.progressed("opaque");
    assertThat(pods.assignedTo("n1", "12", Duration.ZERO)).isEmpty();
  }

  /**
   * One write of the property: pod {@code index} gets {@code target} (0: no annotation, 1:
   * annotated for n1, 2: for n2, 3: annotated for n1 but bound to n2, 4: deleted).
   */
  private record Write(int index, int target) {
    ClusterPod at(long version) {
      String name = "p" + index;
      return switch (target) {
        case 1 -> WatchedPodsTest.pod(name, "n1", null, version);
        case 2 -> WatchedPodsTest.pod(name, "n2", "n2", version);
        case 3 -> WatchedPodsTest.pod(name, "n1", "n2", version);
        default -> WatchedPodsTest.pod(name, null, null, version);
      };
    }
  }

  private static final long BASE = 100; // the version of the state before any write

  /** Every pod after writes {@code [0, count)}, by name: the truth at version BASE + count. */
  private static Map<String, ClusterPod> stateAfter(List<Write> writes, int count) {
    Map<String, ClusterPod> state = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      Write w = writes.get(i);
      state.remove("ns/p" + w.index());
      if (w.target() != 4) {
        ClusterPod p = w.at(BASE + 1 + i);
        state.put(p.key(), p);
      }
    }
    return state;
  }

  /**
   * 500 examples: a run of pod writes delivered in order, with replays of the last few (a re-watch
   * from an older version), listings that may lag the events already applied (a list served from a
   * watch cache behind), and lost events. After every step, for every version asked: the store
   * answers iff it is usable and has reached the version, and then with exactly the truth at the
   * version it holds. Would fail with the replay guard removed (a replay shows an older state) or
   * with the version check removed (a store behind answers).
   */
  @Test
  void anAnswerIsAlwaysTheTruthAtAVersionAtLeastTheOneAsked() {
    Props.qt(500)
        .forAll(
            lists()
                .of(integers().between(0, 3).zip(integers().between(0, 4), Write::new))
                .ofSizeBetween(1, 12),
            lists()
                .of(integers().between(0, 5).zip(integers().between(0, 3), (k, a) -> k * 4 + a))
                .ofSizeBetween(1, 40))
        .checkAssert((writes, steps) -> Props.unchecked(() -> holdsTheTruth(writes, steps)));
  }

  private static void holdsTheTruth(List<Write> writes, List<Integer> steps) throws Exception {
    WatchedPods pods = new WatchedPods();
    pods.listed(Long.toString(BASE), List.of());
    int delivered = 0;
    boolean usable = true;
    for (int step : steps) {
      int kind = step / 4;
      int arg = step % 4;
      switch (kind) {
        case 0, 1, 2 -> { // the next event
          if (delivered < writes.size()) {
            Write w = writes.get(delivered);
            pods.changed(w.at(BASE + 1 + delivered), w.target() == 4);
            delivered++;
          }
        }
        case 3 -> { // a re-watch from up to arg + 1 events back: a reader may look after any
          // one of its replays, so each step replays one event
          if (delivered > 0) {
            int i = Math.max(0, delivered - 1 - arg);
            Write w = writes.get(i);
            pods.changed(w.at(BASE + 1 + i), w.target() == 4);
          }
        }
        case 4 -> { // a listing, possibly arg events behind; the watch then resumes from it
          delivered = Math.max(0, delivered - arg);
          pods.listed(
              Long.toString(BASE + delivered),
              stateAfter(writes, delivered).values().stream().toList());
          usable = true;
        }
        default -> {
          pods.lost("step " + step);
          usable = false;
        }
      }
      Map<String, ClusterPod> truth = stateAfter(writes, delivered);
      for (String node : List.of("n1", "n2")) {
        List<ClusterPod> expected = new ArrayList<>();
        for (ClusterPod p : truth.values()) {
          if (node.equals(p.view().annotations().get(HamiAnnotations.VGPU_NODE))
              && p.nodeName().map(node::equals).orElse(true)) {
            expected.add(p);
          }
        }
        for (long asked = BASE; asked <= BASE + writes.size(); asked++) {
          Optional<List<ClusterPod>> answer =
              pods.assignedTo(node, Long.toString(asked), Duration.ZERO);
          boolean proven = usable && asked <= BASE + delivered;
          assertThat(answer.isPresent())
              .as("answered %s at %s, %d delivered, usable %s", node, asked, delivered, usable)
              .isEqualTo(proven);
          if (proven) {
            assertThat(answer.get()).as("%s at %d delivered", node, delivered).isEqualTo(expected);
          }
        }
      }
    }
  }
}
