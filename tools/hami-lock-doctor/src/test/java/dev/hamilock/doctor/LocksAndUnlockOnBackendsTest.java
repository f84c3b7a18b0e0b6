package dev.hamilock.doctor;

import static dev.hamilock.doctor.Fixtures.LOCK;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@code locks} and {@code unlock} on the emulator and on kube-apiserver + etcd: each lock state
 * produced by a real flow (hami-lock's bind flow with a stalled or a working device plugin, a
 * deleted holder, a malformed and a legacy value written as other writers would), judged by the
 * library's rules; {@code unlock} releasing only the named holder.
 */
class LocksAndUnlockOnBackendsTest {

  KubeBackend k8s;
  KubernetesHamiStack hami;
  String ns = "default";

  @BeforeEach
  void setUp(KubeBackend backend) {
    k8s = backend;
    hami = Fixtures.hami(backend);
  }

  @AfterEach
  void tearDown() {
    hami.close();
  }

  private static LockEntry only(DoctorReport r, String node) {
    NodeEntry n = r.nodes().stream().filter(e -> e.node().equals(node)).findFirst().orElseThrow();
    assertThat(n.locks()).hasSize(1);
    return n.locks().get(0);
  }

  @BackendTest
  void stalledDevicePluginIsHeldThenStuckAllocatingWithTheRegistrationSummary() {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("stalled"));
    String pod = Fixtures.unique("worker");
    Fixtures.gpuPod(
        k8s, ns, pod, Map.of("scheduling.x-k8s.io/pod-group", "g"), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, pod, node); // no Allocate follows: the plugin is stalled

    DoctorReport young = Fixtures.doctor(k8s, Instant.now().plus(Duration.ofMinutes(1))).locks();
    LockEntry held = only(young, node);
    assertThat(held.state()).isEqualTo(LockState.HELD);
    assertThat(held.holder()).contains(ns + "/" + pod);
    assertThat(held.key()).isEqualTo(LOCK);
    NodeEntry summary =
        young.nodes().stream().filter(e -> e.node().equals(node)).findFirst().orElseThrow();
    assertThat(summary.gpus()).isEqualTo(2);
    assertThat(summary.totalMemMiB()).isEqualTo(2 * 46068);
    assertThat(summary.usedMemMiB()).isEqualTo(3000);
    assertThat(summary.usedCores()).isEqualTo(30);
    assertThat(summary.totalCores()).isEqualTo(200);

    k8s.resetCounters();
    DoctorReport old = Fixtures.doctor(k8s, Instant.now().plus(Duration.ofMinutes(6))).locks();
    // cost: one list of nodes, one of pods, one GET per lock that names a holder; no write
    long holders =
        old.nodes().stream()
            .flatMap(n -> n.locks().stream())
            .filter(l -> l.holder().isPresent())
            .count();
    assertThat(k8s.requestCount("list", "nodes")).isEqualTo(1);
    assertThat(k8s.requestCount("list", "pods")).isEqualTo(1);
    assertThat(k8s.requestCount("get", "pods")).isEqualTo(holders);
    assertThat(k8s.requestCounts().keySet())
        .as("no write")
        .extracting(dev.hamilock.testkit.RequestKey::verb)
        .doesNotContain("patch", "update", "create", "delete");
    LockEntry stuck = only(old, node);
    assertThat(stuck.state()).isEqualTo(LockState.STUCK_ALLOCATING);
    assertThat(stuck.detail())
        .contains("bind-phase allocating", "bound here", "device plugin on " + node);
    assertThat(old.findings(Doctor.DR05))
        .anySatisfy(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.checkName()).isEqualTo("node-lock-stuck-allocating");
            });
    assertThat(old.exitStatus()).isEqualTo(DoctorReport.EXIT_ERRORS);
  }

  @BackendTest
  void servedPodsLeaveNoLockAndAnUnservedUnboundHolderExpires() throws Exception {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("served"));
    String pod = Fixtures.unique("worker");
    Fixtures.gpuPod(k8s, ns, pod, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, pod, node);
    Fixtures.allocate(hami, node); // the plugin serves it and releases the lock
    assertThat(only0(Fixtures.doctor(k8s, Instant.now()).locks(), node)).isEmpty();

    // a holder that took the lock and never bound (scheduler died mid-bind): expired after the
    // timeout
    String other = Fixtures.unique("unbound");
    k8s.createPod(ns, other, Map.of());
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5))).watch(false).build()) {
      locks.nodeLock().acquire(node, LockOwner.of(ns, other));
    }
    assertThat(
            only(Fixtures.doctor(k8s, Instant.now().plus(Duration.ofMinutes(6))).locks(), node)
                .state())
        .isEqualTo(LockState.EXPIRED);
  }

  @BackendTest
  void issue28ALockHeldByAPodWhoseGpuWentTheDraRouteIsAnErrorNoDevicePluginReleases()
      throws Exception {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("dra"));
    String pod = Fixtures.unique("dra-pod");
    Fixtures.gpuPod(k8s, ns, pod, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.gpuViaDra(k8s, ns, pod);
    // a HAMi-protocol scheduler that reads no DRA status locks the node for it (HAMi's Bind does)
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .watch(false)
            .build()) {
      locks.nodeLock().acquire(node, LockOwner.of(ns, pod));
    }

    DoctorReport r = Fixtures.doctor(k8s, Instant.now().plus(Duration.ofMinutes(1))).locks();

    LockEntry l = only(r, node);
    assertThat(l.state()).isEqualTo(LockState.DRA_ROUTE);
    assertThat(l.detail()).contains("nvidia.com/gpu through DRA", "until it expires");
    assertThat(r.findings(Doctor.DR05))
        .anySatisfy(
            f -> {
              assertThat(f.severity()).isEqualTo(Severity.ERROR);
              assertThat(f.checkName()).isEqualTo("node-lock-dra-route");
              assertThat(f.fix()).contains("unlock " + node, "--holder " + ns + "/" + pod);
            });
    assertThat(r.exitStatus()).isEqualTo(DoctorReport.EXIT_ERRORS);

    // unlock needs no --force: no Allocate will ever release it, and the output says so
    Fixtures.Run unlocked =
        Fixtures.run(k8s, Instant.now(), "unlock", node, "--holder", ns + "/" + pod);
    assertThat(unlocked.exit()).as(unlocked.out() + unlocked.err()).isZero();
    assertThat(unlocked.out())
        .contains("released lock", "through DRA", "never calls the device plugin's Allocate")
        .doesNotContain("forced");
    assertThat(Fixtures.lockOn(k8s, node)).isEmpty();
  }

  private static Optional<LockEntry> only0(DoctorReport r, String node) {
    return r.nodes().stream()
        .filter(e -> e.node().equals(node))
        .findFirst()
        .orElseThrow()
        .locks()
        .stream()
        .findFirst();
  }

  @BackendTest
  void deletedHolderIsDangling() {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("dangling"));
    String pod = Fixtures.unique("worker");
    Fixtures.gpuPod(k8s, ns, pod, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, pod, node);
    k8s.delete("pods", ns, pod); // gone (emulator) or terminating (real server: bound, no kubelet)
    LockEntry l = only(Fixtures.doctor(k8s, Instant.now()).locks(), node);
    assertThat(l.state()).isEqualTo(LockState.DANGLING);
    assertThat(l.detail()).containsAnyOf("not found", "terminating");
  }

  @BackendTest
  void malformedAndLegacyValuesAreNamedAndMalformedIsAnError() {
    String bad = Fixtures.unique("malformed");
    k8s.createNode(bad, Map.of(LOCK, "locked-by-someone"));
    String legacy = Fixtures.unique("legacy");
    k8s.createNode(legacy, Map.of(LOCK, "2026-11-30T12:00:00Z"));
    DoctorReport r = Fixtures.doctor(k8s, Instant.parse("2026-11-30T12:01:00Z")).locks();
    assertThat(only(r, bad).state()).isEqualTo(LockState.MALFORMED);
    assertThat(only(r, bad).detail()).contains("kubectl annotate node " + bad + " " + LOCK + "-");
    assertThat(only(r, legacy).state()).isEqualTo(LockState.LEGACY);
    assertThat(only(r, legacy).detail()).contains("held until");
    assertThat(
            only(Fixtures.doctor(k8s, Instant.parse("2026-11-30T12:06:00Z")).locks(), legacy)
                .detail())
        .contains("expired");
    assertThat(r.exitStatus()).isEqualTo(DoctorReport.EXIT_ERRORS);

    Fixtures.Run json = Fixtures.run(k8s, Instant.parse("2026-11-30T12:01:00Z"), "--json", "locks");
    assertThat(json.exit()).isEqualTo(1);
    JsonObject root = JsonParser.parseString(json.out()).getAsJsonObject();
    assertThat(root.get("command").getAsString()).isEqualTo("locks");
    assertThat(json.out())
        .contains(
            "\"state\": \"malformed\"",
            "\"state\": \"legacy\"",
            "\"value\": \"locked-by-someone\"");
    Fixtures.Run table = Fixtures.run(k8s, Instant.parse("2026-11-30T12:01:00Z"), "locks");
    assertThat(table.out()).contains("NODE", "STATE", bad, "malformed", "DR05");
  }

  @BackendTest
  void unlockReleasesOnlyTheNamedHolderAndDryRunChangesNothing() {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("unlock"));
    String pod = Fixtures.unique("worker");
    Fixtures.gpuPod(k8s, ns, pod, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, pod, node);
    String value = Fixtures.lockOn(k8s, node).orElseThrow();
    // past the lock timeout (stuck allocating: the plugin never served it): no --force needed
    Instant later = Instant.now().plus(Duration.ofMinutes(6));

    Fixtures.Run wrong = Fixtures.run(k8s, later, "unlock", node, "--holder", ns + "/someone-else");
    assertThat(wrong.exit()).isEqualTo(1);
    assertThat(wrong.out())
        .contains(
            "DR06",
            "is held by " + ns + "/" + pod + ", not " + ns + "/someone-else",
            "nothing changed");
    Fixtures.Run dry =
        Fixtures.run(k8s, later, "unlock", node, "--holder", ns + "/" + pod, "--dry-run");
    assertThat(dry.exit()).isZero();
    assertThat(dry.out()).contains("would release lock " + LOCK + "=\"" + value + "\"");
    assertThat(Fixtures.lockOn(k8s, node)).contains(value);

    k8s.resetCounters();
    Fixtures.Run done =
        Fixtures.run(k8s, later, "unlock", node, "--key", LOCK, "--holder", ns + "/" + pod);
    assertThat(k8s.requestCount("get", "nodes"))
        .isEqualTo(1); // the read the holder is checked against
    assertThat(k8s.requestCount("get", "pods")).isEqualTo(1); // is the holder alive (issue 23)
    assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(1); // one compare-and-delete

    assertThat(done.exit()).as(done.out() + done.err()).isZero();
    assertThat(done.out()).contains("released lock " + LOCK + "=\"" + value + "\"");
    assertThat(Fixtures.lockOn(k8s, node)).isEmpty();
    Fixtures.Run again = Fixtures.run(k8s, later, "unlock", node, "--holder", ns + "/" + pod);
    assertThat(again.exit()).isEqualTo(1);
    assertThat(again.out()).contains("has no lock");
  }

  /**
   * Issue 23: the doctor released a lock 1.8 s old whose holder was alive (exit 0), so a bind in
   * flight for it could still POST its Binding while the next pod took the free lock and the same
   * card.
   */
  @BackendTest
  void issue23UnlockRefusesALockHeldByALiveHolderUnlessForced() {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("held"));
    String pod = Fixtures.unique("binding");
    Fixtures.gpuPod(k8s, ns, pod, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, pod, node);
    String value = Fixtures.lockOn(k8s, node).orElseThrow();

    for (String[] args :
        List.of(
            new String[] {"unlock", node, "--holder", ns + "/" + pod},
            new String[] {"unlock", node, "--holder", ns + "/" + pod, "--dry-run"})) {
      Fixtures.Run refused = Fixtures.run(k8s, Instant.now(), args);
      assertThat(refused.exit()).as(refused.out()).isEqualTo(1);
      assertThat(refused.out())
          .contains(
              "DR06",
              "unlock-refused",
              "within the lock timeout 5m0s",
              "the device plugin serving the wrong pod",
              "a bind in flight binding " + ns + "/" + pod + " onto a card another pod then gets",
              "nothing changed",
              "--force");
      assertThat(Fixtures.lockOn(k8s, node)).contains(value);
    }

    // a forced dry run says the lock would be forced and changes nothing
    Fixtures.Run forcedDry =
        Fixtures.run(
            k8s, Instant.now(), "unlock", node, "--holder", ns + "/" + pod, "--force", "--dry-run");
    assertThat(forcedDry.exit()).as(forcedDry.out() + forcedDry.err()).isZero();
    assertThat(forcedDry.out())
        .contains(
            "WARNING",
            "unlock-forced",
            "would be forced (--dry-run: nothing changed)",
            "would release lock")
        .doesNotContain("was forced");
    assertThat(Fixtures.lockOn(k8s, node)).contains(value);

    Fixtures.Run forced =
        Fixtures.run(k8s, Instant.now(), "unlock", node, "--holder", ns + "/" + pod, "--force");
    assertThat(forced.exit()).as(forced.out() + forced.err()).isZero();
    assertThat(forced.out())
        .contains(
            "WARNING",
            "unlock-forced",
            "the device plugin serving the wrong pod",
            "--force given, so it was forced",
            "released lock");
    assertThat(Fixtures.lockOn(k8s, node)).isEmpty();

    // what forcing risked is contained: the holder still waits for the device plugin, so the next
    // bind on the node takes the free lock and then refuses (issue 23's hand-off guard)
    String next = Fixtures.unique("next");
    Fixtures.gpuPod(k8s, ns, next, Map.of(), Map.of(), "ubuntu:22.04");
    BindResult refused = hami.podBinder().bind(ns, next, "", node);
    assertThat(refused.outcome()).as(refused.reason()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(refused.reason()).contains(ns + "/" + pod, "still waiting for the device plugin");
    assertThat(Fixtures.lockOn(k8s, node)).isEmpty();

    // a dangling lock (holder deleted) needs no --force, as before
    String other = Fixtures.gpuNode(k8s, Fixtures.unique("dangling"));
    String gone = Fixtures.unique("gone");
    Fixtures.gpuPod(k8s, ns, gone, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, gone, other);
    k8s.delete("pods", ns, gone);
    Fixtures.Run dangling =
        Fixtures.run(k8s, Instant.now(), "unlock", other, "--holder", ns + "/" + gone);
    assertThat(dangling.exit()).as(dangling.out()).isZero();
    assertThat(dangling.out()).contains("released lock").doesNotContain("WARNING");
    assertThat(Fixtures.lockOn(k8s, other)).isEmpty();
  }

  /**
   * Issue 23: the doctor judged a lock's age by its own machine's clock, so on a machine running 10
   * minutes ahead a live holder's fresh lock looked expired and {@code unlock} removed it without
   * {@code --force}. Ages are now measured against the API server's clock (its {@code Date}
   * header).
   */
  @BackendTest
  void issue23UnlockOnAMachineWhoseClockRunsAheadStillRefusesALiveHoldersLock() {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("skewed"));
    String pod = Fixtures.unique("binding");
    Fixtures.gpuPod(k8s, ns, pod, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, pod, node);
    String value = Fixtures.lockOn(k8s, node).orElseThrow();
    InstantSource ahead = () -> Instant.now().plus(Duration.ofMinutes(10));

    Fixtures.Run refused =
        Fixtures.run(k8s, b -> b.localClock(ahead), "unlock", node, "--holder", ns + "/" + pod);
    assertThat(refused.exit()).as(refused.out()).isEqualTo(1);
    assertThat(refused.out()).contains("DR06", "unlock-refused", "within the lock timeout 5m0s");
    assertThat(Fixtures.lockOn(k8s, node)).contains(value);

    DoctorReport locks =
        Doctor.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .localClock(ahead)
            .lockTimeout(Duration.ofMinutes(5))
            .build()
            .locks();
    assertThat(only(locks, node).state()).isEqualTo(LockState.HELD);
  }

  @BackendTest
  void unlockRefusesWhenTheLockWasReacquiredAfterTheOperatorReadIt() throws Exception {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("race"));
    String first = Fixtures.unique("first");
    Fixtures.gpuPod(k8s, ns, first, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, first, node);
    // the operator reads: held by first
    assertThat(only(Fixtures.doctor(k8s, Instant.now()).locks(), node).holder())
        .contains(ns + "/" + first);
    // meanwhile first is deleted and a second pod's bind takes the dangling lock over
    k8s.delete("pods", ns, first);
    String second = Fixtures.unique("second");
    Fixtures.gpuPod(k8s, ns, second, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, ns, second, node);
    String now = Fixtures.lockOn(k8s, node).orElseThrow();
    assertThat(now).endsWith("," + ns + "," + second);

    Fixtures.Run r = Fixtures.run(k8s, Instant.now(), "unlock", node, "--holder", ns + "/" + first);
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.out())
        .contains("is held by " + ns + "/" + second + ", not " + ns + "/" + first, "refused");
    assertThat(Fixtures.lockOn(k8s, node)).contains(now);
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5))).watch(false).build()) {
      NodeLock lock = locks.nodeLock();
      assertThat(lock.readValue(node)).contains(now);
    }
  }
}
