package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.testing.logs.LogCapture;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSchedulingGroup;
import io.kubernetes.client.openapi.models.V1PodSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Spec §1.11, §1.12 and §8 V27–V32 (HAMi scheduler_test.go, util_test.go), with fake vendors. */
class HamiBindLockingTest {

  private static final String NODE = "node1";

  /** A vendor that records calls and fails as scripted. */
  private static final class FakeVendor implements VendorLock {
    private final String name;
    private final List<String> calls;
    private final List<Exception> lockFailures;
    private final Exception releaseFailure;

    FakeVendor(
        String name, List<String> calls, List<Exception> lockFailures, Exception releaseFailure) {
      this.name = name;
      this.calls = calls;
      this.lockFailures = new ArrayList<>(lockFailures);
      this.releaseFailure = releaseFailure;
    }

    @Override
    public void lockNode(String node, V1Pod pod) throws ApiException, HamiException {
      calls.add("lock:" + name);
      if (!lockFailures.isEmpty()) {
        Exception next = lockFailures.size() == 1 ? lockFailures.get(0) : lockFailures.remove(0);
        if (next != null) {
          throwIt(next);
        }
      }
    }

    @Override
    public void releaseNodeLock(String node, V1Pod pod) throws ApiException, HamiException {
      calls.add("release:" + name);
      if (releaseFailure != null) {
        throwIt(releaseFailure);
      }
    }

    private static void throwIt(Exception e) throws ApiException, HamiException {
      if (e instanceof ApiException) {
        throw (ApiException) e;
      }
      throw (HamiException) e;
    }
  }

  private static HamiLockContentionException contention() {
    return new HamiLockContentionException("node node1 has been locked within 5m0s");
  }

  private static V1Pod pod(Map<String, String> labels) {
    return new V1Pod()
        .metadata(new V1ObjectMeta().namespace("default").name("p").labels(labels))
        .spec(new V1PodSpec());
  }

  private static V1Pod member() {
    return pod(Map.of(HamiBindLocking.POD_GROUP_LABEL, "my-training-job"));
  }

  /** Virtual time: each poll wait advances the clock by exactly the interval. */
  private static final class VirtualTime {
    final AtomicLong now = new AtomicLong();
    final List<Duration> waits = Collections.synchronizedList(new ArrayList<>());

    HamiBindLocking.Builder apply(HamiBindLocking.Builder b) {
      return b.virtualTime(
          now::get,
          d -> {
            waits.add(d);
            now.addAndGet(d.toNanos());
          });
    }
  }

  @Test
  void v27NonMemberContendingOnceFailsAfterOneCall() {
    List<String> calls = new ArrayList<>();
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .vendor("NVIDIA", new FakeVendor("NVIDIA", calls, List.of(contention()), null))
            .build();

    assertThatThrownBy(() -> locking.acquireNodeLocks(NODE, pod(Map.of())))
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isTrue())
        .hasMessageContaining("node lock contention");
    assertThat(locking.lockAllDevicesCalls()).isEqualTo(1);
    assertThat(calls).containsExactly("lock:NVIDIA");
  }

  @Test
  void v28MemberRetriesEvery100msUntilTheLockFrees() throws Exception {
    List<String> calls = new ArrayList<>();
    VirtualTime time = new VirtualTime();
    List<Exception> script = new ArrayList<>(List.of(contention(), contention()));
    script.add(null);
    HamiBindLocking locking =
        time.apply(
                HamiBindLocking.builder()
                    .retryTimeout(Duration.ofSeconds(2))
                    .vendor("NVIDIA", new FakeVendor("NVIDIA", calls, script, null)))
            .build();

    locking.acquireNodeLocks(NODE, member());

    assertThat(locking.lockAllDevicesCalls()).isEqualTo(3);
    assertThat(time.waits).containsExactly(Duration.ofMillis(100), Duration.ofMillis(100));
  }

  @Test
  void v29MemberAlwaysContendingTimesOutAfterTheDeadlineAndBindReleases() {
    List<String> calls = new ArrayList<>();
    VirtualTime time = new VirtualTime();
    HamiBindLocking locking =
        time.apply(
                HamiBindLocking.builder()
                    .retryTimeout(Duration.ofMillis(300))
                    .vendor("NVIDIA", new FakeVendor("NVIDIA", calls, List.of(contention()), null)))
            .build();

    assertThatThrownBy(() -> locking.acquireNodeLocks(NODE, member()))
        .isInstanceOf(HamiLockContentionException.class)
        .hasMessage(
            "timed out after 300ms waiting for node node1 to be unlocked: node lock contention");
    // Attempts at t = 0, 100, 200, 300 (300 is not after the deadline), 400 (after it): the
    // deadline is checked after each attempt, so the last one starts at or before it.
    assertThat(locking.lockAllDevicesCalls()).isEqualTo(5);
    assertThat(time.now.get()).isEqualTo(Duration.ofMillis(400).toNanos());

    locking.releaseAllDevices(NODE, member()); // Bind's fail path
    assertThat(locking.vendorReleaseCalls()).isGreaterThanOrEqualTo(1);
    assertThat(calls).endsWith("release:NVIDIA");
  }

  @Test
  void v30MemberWithANonContentionErrorFailsAfterOneCall() {
    List<String> calls = new ArrayList<>();
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .vendor(
                "NVIDIA",
                new FakeVendor(
                    "NVIDIA", calls, List.of(new ApiException(500, "apiserver 500")), null))
            .build();

    assertThatThrownBy(() -> locking.acquireNodeLocks(NODE, member()))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("apiserver 500");
    assertThat(locking.lockAllDevicesCalls()).isEqualTo(1);
  }

  @Test
  void zeroTimeoutDisablesTheRetryForMembers() {
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .retryTimeout(Duration.ZERO)
            .vendor(
                "NVIDIA", new FakeVendor("NVIDIA", new ArrayList<>(), List.of(contention()), null))
            .build();
    assertThatThrownBy(() -> locking.acquireNodeLocks(NODE, member()))
        .isInstanceOf(HamiLockContentionException.class)
        .hasMessage("node node1 has been locked within 5m0s: node lock contention");
    assertThat(locking.lockAllDevicesCalls()).isEqualTo(1);
  }

  @Test
  void v31RollbackReleasesEarlierVendorsInReverseOrderAndKeepsTheOriginalError() {
    List<String> calls = new ArrayList<>();
    HamiException third = new HamiException("backend3 failed");
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .vendor("backend3", new FakeVendor("backend3", calls, List.of(third), null))
            .vendor("backend1", new FakeVendor("backend1", calls, List.of(), null))
            .vendor(
                "backend2",
                new FakeVendor("backend2", calls, List.of(), new HamiException("release boom")))
            .build();

    try (LogCapture log = LogCapture.start()) {
      assertThatThrownBy(() -> locking.lockAllDevices(NODE, member())).isSameAs(third);
      assertThat(
              log.expect(
                  "WARN dev\\.hamilock\\.reference\\.HamiBindLocking - Failed to release node lock"
                      + " \\(rollback\\): vendor=backend2 node=node1 error=release boom$"))
          .as("HAMi logs the failed rollback release and goes on with the next vendor")
          .hasSize(1);
    }
    assertThat(calls)
        .containsExactly(
            "lock:backend1",
            "lock:backend2",
            "lock:backend3",
            "release:backend2",
            "release:backend1");
  }

  @Test
  void v31FirstVendorFailingCallsNoReleaseAndNoLaterVendor() {
    List<String> calls = new ArrayList<>();
    HamiException first = new HamiException("backend1 failed");
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .vendor("backend1", new FakeVendor("backend1", calls, List.of(first), null))
            .vendor("backend2", new FakeVendor("backend2", calls, List.of(), null))
            .build();

    assertThatThrownBy(() -> locking.lockAllDevices(NODE, member())).isSameAs(first);
    assertThat(calls).containsExactly("lock:backend1");
  }

  @Test
  void vendorsAreCalledInByteOrderOfTheirKeys() {
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .vendor("kunlun", new FakeVendor("k", new ArrayList<>(), List.of(), null))
            .vendor("NVIDIA", new FakeVendor("n", new ArrayList<>(), List.of(), null))
            .vendor("Ascend910B", new FakeVendor("a", new ArrayList<>(), List.of(), null))
            .vendor("AWSNeuron", new FakeVendor("w", new ArrayList<>(), List.of(), null))
            .build();
    assertThat(locking.vendorOrder())
        .containsExactly("AWSNeuron", "Ascend910B", "NVIDIA", "kunlun");
  }

  @Test
  void v32PodGroupMembership() {
    assertThat(HamiBindLocking.isPodGroupMember(null)).isFalse();
    assertThat(HamiBindLocking.isPodGroupMember(new V1Pod())).isFalse();
    assertThat(HamiBindLocking.isPodGroupMember(member())).isTrue();
    assertThat(HamiBindLocking.isPodGroupMember(pod(Map.of(HamiBindLocking.POD_GROUP_LABEL, ""))))
        .isFalse();
    V1Pod grouped = pod(Map.of());
    grouped.getSpec().schedulingGroup(new V1PodSchedulingGroup().podGroupName("my-training-job"));
    assertThat(HamiBindLocking.isPodGroupMember(grouped)).isTrue();
    V1Pod nilName = pod(Map.of());
    nilName.getSpec().schedulingGroup(new V1PodSchedulingGroup());
    assertThat(HamiBindLocking.isPodGroupMember(nilName)).isFalse();
    V1Pod emptyName = pod(Map.of());
    emptyName.getSpec().schedulingGroup(new V1PodSchedulingGroup().podGroupName(""));
    assertThat(HamiBindLocking.isPodGroupMember(emptyName)).isFalse();
    V1Pod both = member();
    both.getSpec().schedulingGroup(new V1PodSchedulingGroup().podGroupName("my-training-job"));
    assertThat(HamiBindLocking.isPodGroupMember(both)).isTrue();
  }

  @Test
  void shutdownEndsAWaitingMemberWithTheShutdownContentionError() throws Exception {
    CountDownLatch firstAttempt = new CountDownLatch(1);
    VendorLock alwaysBusy =
        new VendorLock() {
          @Override
          public void lockNode(String node, V1Pod pod) throws HamiException {
            firstAttempt.countDown();
            throw contention();
          }

          @Override
          public void releaseNodeLock(String node, V1Pod pod) {}
        };
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .retryTimeout(Duration.ofMinutes(10))
            .vendor("NVIDIA", alwaysBusy)
            .build();
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    Thread binder =
        new Thread(
            () -> {
              try {
                locking.acquireNodeLocks(NODE, member());
              } catch (Exception e) {
                outcome.set(e);
              }
            });
    binder.start();
    assertThat(firstAttempt.await(10, TimeUnit.SECONDS)).isTrue();
    locking.shutdown();
    binder.join(TimeUnit.SECONDS.toMillis(10));

    assertThat(binder.isAlive()).isFalse();
    assertThat(outcome.get())
        .isInstanceOf(HamiLockContentionException.class)
        .hasMessage("scheduler shutting down while waiting for node lock: node lock contention");
  }

  @Test
  void interruptionEndsAWaitingMemberAndKeepsTheInterruptFlag() throws Exception {
    CountDownLatch firstAttempt = new CountDownLatch(1);
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    AtomicReference<Boolean> flag = new AtomicReference<>();
    HamiBindLocking locking =
        HamiBindLocking.builder()
            .retryTimeout(Duration.ofMinutes(10))
            .vendor(
                "NVIDIA",
                new VendorLock() {
                  @Override
                  public void lockNode(String node, V1Pod pod) throws HamiException {
                    firstAttempt.countDown();
                    throw contention();
                  }

                  @Override
                  public void releaseNodeLock(String node, V1Pod pod) {}
                })
            .build();
    Thread binder =
        new Thread(
            () -> {
              try {
                locking.acquireNodeLocks(NODE, member());
              } catch (Exception e) {
                outcome.set(e);
                flag.set(Thread.currentThread().isInterrupted());
              }
            });
    binder.start();
    assertThat(firstAttempt.await(10, TimeUnit.SECONDS)).isTrue();
    binder.interrupt();
    binder.join(TimeUnit.SECONDS.toMillis(10));

    assertThat(outcome.get())
        .hasMessage("scheduler shutting down while waiting for node lock: node lock contention");
    assertThat(flag.get()).isTrue();
  }

  @Test
  void builderRejectsBadConfiguration() {
    VendorLock v = new FakeVendor("x", new ArrayList<>(), List.of(), null);
    assertThatThrownBy(() -> HamiBindLocking.builder().vendor("NVIDIA", v).vendor("NVIDIA", v))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NVIDIA");
    assertThatThrownBy(() -> HamiBindLocking.builder().pollInterval(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pollInterval");
    assertThatThrownBy(() -> HamiBindLocking.builder().vendor("", v))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
