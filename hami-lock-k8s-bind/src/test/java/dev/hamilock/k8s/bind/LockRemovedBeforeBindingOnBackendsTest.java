package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.testing.LockRemovedBeforeBinding;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.fixtures.BackendFixtures;
import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Issue 23, fault 1, through the backend template ({@link LockRemovedBeforeBinding} over {@link
 * BackendScenarioBackend}: each binder its own client stack, the removal an unconditional update of
 * the node as {@code kubectl annotate node … hami.io/mutex.lock-} makes it): pod a's young lock,
 * removed and acquired by pod b before a's Binding, was confirmed from a's own stamp without asking
 * the API server, and both pods were bound onto one 15360 MiB card with 10000 MiB each.
 */
class LockRemovedBeforeBindingOnBackendsTest {

  @BackendTest
  void issue23LockRemovedByAnotherWriterBeforeTheBindingEndsContendedWithNoOverCommit(
      KubeBackend k8s) throws Exception {
    String run = BackendFixtures.runId("lost");
    try (BackendScenarioBackend backend = new BackendScenarioBackend(k8s, run);
        LogCapture log = LogCapture.start()) {
      LockRemovedBeforeBinding.Outcome o =
          LockRemovedBeforeBinding.run(backend, VendorRegistry.discover(), run + "-t4");
      assertThat(
              log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* is no longer held"))
          .hasSize(1);

      assertThat(o.a().outcome()).as("%s", o).isEqualTo(BindOutcome.CONTENDED);
      assertThat(o.a().reason()).contains("no longer held by pod " + run + "/a");
      assertThat(o.bindings()).containsExactly("b->" + run + "-t4");
      assertThat(o.unmet()).isEmpty();
    }
  }

  /**
   * The confirmation's cost, counted by the server (the emulator's counters, or kube-apiserver's
   * {@code apiserver_request_total}): an uncontended bind of one pod reads the node twice — once
   * for the re-fit under the lock, once to confirm the lock right before the Binding (before issue
   * 23: once; a young lock was confirmed from the binder's own stamp) — and writes it once (the
   * acquire; the lock is kept for the device plugin).
   */
  @BackendTest
  void aBindConfirmsItsYoungLockWithOneGetOfTheNode(KubeBackend k8s) throws Exception {
    String run = BackendFixtures.runId("cost");
    String node = run + "-t4";
    try (BackendScenarioBackend backend = new BackendScenarioBackend(k8s, run)) {
      backend.createNode(
          new Scenario.NodeSpec(
                  node, List.of(new Scenario.GpuSpec(node + "-gpu", 15360, "NVIDIA-Tesla T4")))
              .toNodeView());
      PodView pod =
          backend.createPod(
              new Scenario.PodSpec("p", 1, 3000, 0, 30, 0, 0, false, Scenario.BindingFault.NONE)
                  .toPodView("cost"));
      PodBinder binder =
          PodBinder.builder(
                  backend.reader(), backend.writer(), VendorRegistry.discover(), backend.locks())
              .build();
      backend.reader().readNode(node); // this thread's client stack (and its watch) first
      k8s.resetCounters();

      BindResult r = binder.bind(pod.namespace(), pod.name(), "", node);

      assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (k8s.requestCount("create", "pods/binding") < 1 && System.nanoTime() < deadline) {
        Thread.sleep(20); // the real server counts a request when its handler returns
      }
      System.out.printf(
          "[%s] one uncontended bind: GET nodes %d, PATCH nodes %d, total %d (%s)%n",
          k8s.kind().label(),
          k8s.requestCount("get", "nodes"),
          k8s.requestCount("patch", "nodes"),
          k8s.totalRequests(),
          k8s.requestCounts());
      assertThat(k8s.requestCount("get", "nodes")).as("re-fit + confirmation").isEqualTo(2);
      assertThat(k8s.requestCount("patch", "nodes")).as("the acquire").isEqualTo(1);
      assertThat(k8s.requestCount("create", "pods/binding")).isEqualTo(1);
    }
  }
}
