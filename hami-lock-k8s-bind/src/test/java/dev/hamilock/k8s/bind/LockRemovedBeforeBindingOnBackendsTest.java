package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.testing.LockRemovedBeforeBinding;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.fixtures.BackendFixtures;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;

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
    try (BackendScenarioBackend backend = new BackendScenarioBackend(k8s, run)) {
      LockRemovedBeforeBinding.Outcome o =
          LockRemovedBeforeBinding.run(backend, VendorRegistry.discover(), run + "-t4");

      assertThat(o.a().outcome()).as("%s", o).isEqualTo(BindOutcome.CONTENDED);
      assertThat(o.a().reason()).contains("no longer held by pod " + run + "/a");
      assertThat(o.bindings()).containsExactly("b->" + run + "-t4");
      assertThat(o.unmet()).isEmpty();
    }
  }
}
