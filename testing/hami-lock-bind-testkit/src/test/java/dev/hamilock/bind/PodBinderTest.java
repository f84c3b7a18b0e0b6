package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NOW;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PodBinderTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  ClusterPod add(PodView pod) {
    return cluster.addPod(pod);
  }

  /** Writes Filter annotations claiming {@code gpuUuid} for a one-container pod. */
  void filterChose(String pod, String node, String gpuUuid, int mem, int cores)
      throws ClusterException {
    String v = gpuUuid + ",NVIDIA," + mem + "," + cores + ":;";
    cluster.patchPodMetadata(
        NS,
        pod,
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, v)
            .setAnnotation(ALLOCATED, v)
            .setAnnotation("hami.io/vgpu-node", node)
            .setAnnotation("hami.io/vgpu-time", "1")
            .setLabel("hami.io/vgpu-node", node)
            .build());
  }

  @Test
  void bindsWritesHamiAnnotationsAndKeepsTheLockForTheDevicePlugin() {
    cluster.addNode(node("n1", 1, 15360));
    ClusterPod p = add(pod("p1", 1, 1000, 30));

    BindResult r = binder(cluster).build().bind(NS, "p1", p.view().uid(), "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.failure()).isEmpty();
    assertThat(r.allocationSource()).isEqualTo(AllocationSource.REFITTED);
    assertThat(r.locksHeld()).isTrue();
    assertThat(r.lockKeys()).containsExactly(LOCK_KEY);
    assertThat(r.lockAttempts()).isEqualTo(1);
    String expected = gpu("n1", 0) + ",NVIDIA,1000,30:;";
    Map<String, String> a = annotations(cluster, "p1");
    assertThat(a)
        .containsEntry(TO_ALLOCATE, expected)
        .containsEntry(ALLOCATED, expected)
        .containsEntry("hami.io/vgpu-node", "n1")
        .containsEntry("hami.io/vgpu-time", Long.toString(NOW.getEpochSecond()))
        .containsEntry("hami.io/bind-phase", "allocating")
        .containsEntry("hami.io/bind-time", Long.toString(NOW.getEpochSecond()));
    ClusterPod stored = cluster.pods().get(0);
    assertThat(stored.view().labels()).containsEntry("hami.io/vgpu-node", "n1");
    assertThat(stored.nodeName()).contains("n1");
    assertThat(lockValue(cluster, "n1")).isEqualTo("2026-06-14T15:05:03Z,default,p1");
    assertThat(r.devices().orElseThrow().forVendor("NVIDIA").get(0))
        .singleElement()
        .satisfies(d -> assertThat(d.uuid()).isEqualTo(gpu("n1", 0)));
    assertThat(r.timings().total()).isGreaterThanOrEqualTo(Duration.ZERO);
  }

  @Test
  void everyStepIsTimedWithTheInjectedClock() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    java.util.concurrent.atomic.AtomicLong ticks = new java.util.concurrent.atomic.AtomicLong();
    java.time.InstantSource ticking =
        () -> NOW.plusMillis(ticks.incrementAndGet()); // 1 ms per reading

    BindResult r = binder(cluster).clock(ticking).build().bind(NS, "p1", "", "n1");

    BindTimings t = r.timings();
    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(List.of(t.lockWait(), t.refit(), t.annotate(), t.binding()))
        .allSatisfy(d -> assertThat(d).isPositive());
    assertThat(t.cleanup()).isZero();
    assertThat(t.total())
        .isGreaterThan(t.lockWait().plus(t.refit()).plus(t.annotate()).plus(t.binding()));
  }

  @Test
  void keepsTheFiltersAllocationWhenItStillFits() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    add(pod("p1", 1, 1000, 30));
    filterChose("p1", "n1", gpu("n1", 1), 1000, 30);

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.allocationSource()).isEqualTo(AllocationSource.FILTER_KEPT);
    assertThat(annotations(cluster, "p1"))
        .containsEntry(ALLOCATED, gpu("n1", 1) + ",NVIDIA,1000,30:;");
  }

  @Test
  void refitsUnderTheLockWhenAnotherSchedulerTookTheFiltersGpu() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    add(pod("other", 1, 1000, 100)); // exclusive user of GPU 0, written by another scheduler
    filterChose("other", "n1", gpu("n1", 0), 1000, 100);
    add(pod("p1", 1, 1000, 30));
    filterChose("p1", "n1", gpu("n1", 0), 1000, 30); // chosen on a stale snapshot

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.allocationSource()).isEqualTo(AllocationSource.REFITTED);
    assertThat(annotations(cluster, "p1"))
        .containsEntry(ALLOCATED, gpu("n1", 1) + ",NVIDIA,1000,30:;");
  }

  @Test
  void withoutRefitTheStaleChoiceIsWrittenAsHamiDoes() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    add(pod("other", 1, 1000, 100));
    filterChose("other", "n1", gpu("n1", 0), 1000, 100);
    add(pod("p1", 1, 1000, 30));
    filterChose("p1", "n1", gpu("n1", 0), 1000, 30);

    BindResult r = binder(cluster).refitUnderLock(false).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.allocationSource()).isEqualTo(AllocationSource.UNCHECKED);
    assertThat(annotations(cluster, "p1"))
        .containsEntry(ALLOCATED, gpu("n1", 0) + ",NVIDIA,1000,30:;");
  }

  @Test
  void doesNotFitClearsTheFilterAnnotationsAndReleasesTheLock() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("other", 1, 15000, 10));
    filterChose("other", "n1", gpu("n1", 0), 15000, 10);
    add(pod("p1", 1, 1000, 30));
    filterChose("p1", "n1", gpu("n1", 0), 1000, 30);

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(r.reason()).contains("no longer fits").contains("CardInsufficientMemory");
    assertThat(r.failure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FlowFailure.Kind.DOES_NOT_FIT);
              assertThat(f.retryable()).isTrue();
              assertThat(f.httpStatus()).isEmpty();
              assertThat(f.message()).isEqualTo(r.reason());
            });
    assertThat(r.locksHeld()).isFalse();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1"))
        .doesNotContainKeys(
            TO_ALLOCATE,
            ALLOCATED,
            "hami.io/vgpu-node",
            "hami.io/vgpu-time",
            "hami.io/bind-phase",
            "hami.io/bind-time");
    assertThat(cluster.pods().get(1).view().labels()).doesNotContainKey("hami.io/vgpu-node");
    assertThat(cluster.pods().get(1).isBound()).isFalse();
  }

  @Test
  void contentionFailsFastForAPodOutsideAGangAndLeavesTheHoldersLock() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    add(pod("holder", 1, 1000, 30));
    BindResult first = binder(cluster).build().bind(NS, "holder", "", "n1");
    assertThat(first.outcome()).isEqualTo(BindOutcome.BOUND);

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(r.lockAttempts()).isEqualTo(1);
    assertThat(r.reason()).endsWith("node lock contention");
    assertThat(r.failure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.contention()).isTrue();
              assertThat(f.cause())
                  .containsInstanceOf(dev.hamilock.core.LockContentionException.class);
            });
    assertThat(lockValue(cluster, "n1")).isEqualTo("2026-06-14T15:05:03Z,default,holder");
    assertThat(cluster.operationCount(Operation.BIND)).isEqualTo(1);
  }

  @Test
  void aGangMemberRetriesUntilTheRetryTimeout() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("holder", 1, 1000, 30));
    add(Fixtures.gangPod("g1", 1, 1000, 30));
    assertThat(binder(cluster).build().bind(NS, "holder", "", "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);

    BindResult r = binder(cluster).build().bind(NS, "g1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.TIMED_OUT);
    assertThat(r.lockAttempts()).isGreaterThan(1);
    assertThat(r.reason()).startsWith("timed out after 200ms waiting for node n1 to be unlocked");
    assertThat(r.failure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.contention()).isTrue();
              assertThat(f.cause())
                  .containsInstanceOf(dev.hamilock.core.LockWaitTimeoutException.class);
            });
  }

  @Test
  void theLockListenerHearsWhenEachBindsLockWaitEndsOnTheBindingThread() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("holder", 1, 1000, 30));
    add(Fixtures.gangPod("g1", 1, 1000, 30));
    List<String> waits = new java.util.concurrent.CopyOnWriteArrayList<>();
    PodBinder binder =
        binder(cluster)
            .acquirer(
                acquirer(
                    new dev.hamilock.core.NodeLockListener() {
                      @Override
                      public void waited(
                          String node,
                          dev.hamilock.core.LockOwner owner,
                          Duration waited,
                          int attempts,
                          boolean acquired) {
                        waits.add(
                            owner.name()
                                + "@"
                                + node
                                + " acquired="
                                + acquired
                                + " on "
                                + Thread.currentThread().getName());
                      }
                    }))
            .build();
    String me = Thread.currentThread().getName();

    assertThat(binder.bind(NS, "holder", "", "n1").outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(binder.bind(NS, "g1", "", "n1").outcome()).isEqualTo(BindOutcome.TIMED_OUT);

    assertThat(waits)
        .containsExactly("holder@n1 acquired=true on " + me, "g1@n1 acquired=false on " + me);
  }

  @Test
  void aGangMemberBindsOnceTheDevicePluginReleasesTheLock() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    add(pod("holder", 1, 1000, 30));
    add(Fixtures.gangPod("g1", 1, 1000, 30));
    assertThat(binder(cluster).build().bind(NS, "holder", "", "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
    DevicePluginHandoff plugin = Fixtures.handoff(cluster);
    // the second lock read happens in the second attempt: the first one has certainly met
    // contention
    CountDownLatch firstAttemptFailed = new CountDownLatch(1);
    AtomicInteger lockReads = new AtomicInteger();
    cluster.faults(
        (op, target) -> {
          if (op == Operation.LOCK_READ && lockReads.incrementAndGet() == 2) {
            firstAttemptFailed.countDown();
          }
          return Fault.NONE;
        });
    PodBinder longWait =
        PodBinder.builder(cluster, cluster, Fixtures.REGISTRY, Fixtures.locks(cluster))
            .clock(Fixtures.CLOCK)
            .retryPolicy(
                dev.hamilock.core.RetryPolicy.builder()
                    .pollInterval(Duration.ofMillis(5))
                    .retryTimeout(Duration.ofSeconds(10))
                    .build())
            .build();
    CompletableFuture<BindResult> waiting =
        longWait.bindAsync(NS, "g1", "", "n1", Executors.newSingleThreadExecutor());
    assertThat(firstAttemptFailed.await(5, TimeUnit.SECONDS)).isTrue();
    HandoffResult h = plugin.allocateAll("n1");
    assertThat(h.status()).isEqualTo(HandoffResult.Status.COMPLETED);

    BindResult r = waiting.get(10, TimeUnit.SECONDS);
    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.lockAttempts()).isGreaterThan(1);
    assertThat(lockValue(cluster, "n1")).endsWith(",default,g1");
  }

  @Test
  void anAmbiguousBindingThatWasAppliedIsASuccess() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    cluster.faults((op, t) -> op == Operation.BIND ? Fault.FAIL_AFTER : Fault.NONE);

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.locksHeld()).isTrue();
    assertThat(lockValue(cluster, "n1")).endsWith(",default,p1");
  }

  @Test
  void anAmbiguousBindingThatWasNotAppliedIsCleanedUp() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    cluster.faults((op, t) -> op == Operation.BIND ? Fault.FAIL_BEFORE : Fault.NONE);

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("was not applied");
    assertThat(r.locksHeld()).isFalse();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1"))
        .doesNotContainKeys(TO_ALLOCATE, ALLOCATED, "hami.io/vgpu-node", "hami.io/bind-phase");
  }

  @Test
  void anAmbiguousBindingWhoseOutcomeCannotBeReadKeepsEverything() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    AtomicBoolean bindingSent = new AtomicBoolean();
    cluster.faults(
        (op, t) -> {
          if (op == Operation.BIND) {
            bindingSent.set(true);
            return Fault.FAIL_AFTER;
          }
          return op == Operation.READ_POD && bindingSent.get() ? Fault.FAIL_BEFORE : Fault.NONE;
        });

    BindResult r;
    try (LogCapture log = LogCapture.start()) {
      r = binder(cluster).ambiguityRereads(2).build().bind(NS, "p1", "", "n1");
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - binding pod default/p1 .*"))
          .hasSize(1);
    }

    assertThat(r.outcome()).isEqualTo(BindOutcome.UNKNOWN);
    assertThat(r.failure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FlowFailure.Kind.UNAVAILABLE);
              assertThat(f.cause())
                  .containsInstanceOf(ClusterException.class); // the last failed re-read
            });
    assertThat(r.locksHeld()).isTrue();
    assertThat(lockValue(cluster, "n1")).endsWith(",default,p1");
    assertThat(annotations(cluster, "p1")).containsKey(ALLOCATED);
    assertThat(cluster.operationCount(Operation.READ_POD))
        .isEqualTo(3); // the initial read and two re-reads
  }

  @Test
  void aRejectedBindingIsCleanedUp() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    ClusterWriter rejecting =
        new ClusterWriter() {
          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            return cluster.patchPodMetadata(namespace, name, patch);
          }

          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String rv, String node) {
            return BindingPostResult.rejected("pods \"p1\" is forbidden");
          }
        };
    BindResult r =
        PodBinder.builder(cluster, rejecting, Fixtures.REGISTRY, Fixtures.locks(cluster))
            .build()
            .bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("forbidden");
    assertThat(r.failure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FlowFailure.Kind.REJECTED);
              assertThat(f.retryable()).isFalse();
            });
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1")).doesNotContainKey(ALLOCATED);
  }

  @Test
  void aBindingAnswered409AlreadyAssignedCarriesTheStatusAndCause() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    RuntimeException apiFailure =
        new RuntimeException("HTTP 409: pod p1 is already assigned to node \"n2\"");
    ClusterWriter assigned =
        new ClusterWriter() {
          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            return cluster.patchPodMetadata(namespace, name, patch);
          }

          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String rv, String node) {
            return BindingPostResult.alreadyBound("n2")
                .withAnswer(java.util.OptionalInt.of(409), apiFailure);
          }
        };

    BindResult r =
        PodBinder.builder(cluster, assigned, Fixtures.REGISTRY, Fixtures.locks(cluster))
            .build()
            .bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.ALREADY_BOUND);
    assertThat(r.failure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FlowFailure.Kind.ALREADY_BOUND);
              assertThat(f.httpStatus()).hasValue(409);
              assertThat(f.cause()).contains(apiFailure);
            });
    assertThat(lockValue(cluster, "n1")).isNull();
  }

  @Test
  void anAlreadyBoundPodIsLeftUntouched() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("p1", 1, 1000, 30), Optional.of("n2"));

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.ALREADY_BOUND);
    assertThat(r.failure().map(FlowFailure::kind)).contains(FlowFailure.Kind.ALREADY_BOUND);
    assertThat(r.boundNode()).contains("n2");
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isZero();
    assertThat(cluster.operationCount(Operation.LOCK_WRITE)).isZero();
  }

  @Test
  void anotherIncarnationIsNotFound() {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));

    BindResult r = binder(cluster).build().bind(NS, "p1", "some-old-uid", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.POD_NOT_FOUND);
    assertThat(cluster.operationCount(Operation.LOCK_WRITE)).isZero();
  }

  @Test
  void aPodWithoutDeviceRequestsIsBoundWithoutLockOrAnnotations() {
    cluster.addNode(node("n1", 1, 15360));
    add(PodView.builder(NS, "plain").build());

    BindResult r = binder(cluster).build().bind(NS, "plain", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.lockKeys()).isEmpty();
    assertThat(r.locksHeld()).isFalse();
    assertThat(cluster.operationCount(Operation.LOCK_WRITE)).isZero();
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isZero();
  }

  @Test
  void theAsyncVariantRunsOnTheGivenExecutor() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("p1", 1, 1000, 30));
    AtomicInteger executed = new AtomicInteger();

    BindResult r =
        binder(cluster)
            .build()
            .bindAsync(
                NS,
                "p1",
                "",
                "n1",
                task -> {
                  executed.incrementAndGet();
                  task.run();
                })
            .get(5, TimeUnit.SECONDS);

    // the flow's first step, its one lock attempt (the steps after it run on that task), and
    // beside that attempt, at the node's version, the node's, the pod lists' and the DRA reads
    // (issue 25 item 2)
    assertThat(executed).hasValue(5);
    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
  }

  @Test
  void twoSchedulersOverlappingOnOneGpuNeverBothGetIt() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    add(pod("a", 1, 1000, 100));
    add(pod("b", 1, 1000, 100));
    filterChose("a", "n1", gpu("n1", 0), 1000, 100);
    filterChose(
        "b", "n1", gpu("n1", 0), 1000, 100); // both chose the same exclusive card without a lock

    BindResult a = binder(cluster).build().bind(NS, "a", "", "n1");
    BindResult b = binder(cluster).build().bind(NS, "b", "", "n1");

    // b's in-flight Filter claim counts as usage (as in HAMi), so a yields; once a's claim is
    // cleared, b binds: exactly one of them gets the exclusive card
    assertThat(a.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(a.reason()).contains("CardInsufficientCore");
    assertThat(annotations(cluster, "a")).doesNotContainKey(ALLOCATED);
    assertThat(b.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(b.allocationSource()).isEqualTo(AllocationSource.FILTER_KEPT);
  }

  private static dev.hamilock.core.acquire.NodeLockAcquirer acquirer(
      dev.hamilock.core.NodeLockListener listener) {
    return dev.hamilock.core.acquire.NodeLockAcquirer.create(
        dev.hamilock.core.LockSettings.builder()
            .retryPolicy(Fixtures.RETRY)
            .listener(listener)
            .build());
  }
}
