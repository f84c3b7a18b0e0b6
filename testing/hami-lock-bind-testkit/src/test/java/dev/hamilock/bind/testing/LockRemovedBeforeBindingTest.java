package dev.hamilock.bind.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.testing.logs.LogCapture;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, fault 1, on the in-memory cluster ({@link LockRemovedBeforeBinding}): pod a's lock is
 * removed by another writer and acquired by pod b between a's acquire and its Binding. a's binder
 * confirmed its young lock from its own stamp (no request) and POSTed its Binding: both pods on one
 * T4 with 10000 MiB each.
 */
class LockRemovedBeforeBindingTest {

  @Test
  void issue23LockRemovedByAnotherWriterBeforeTheBindingEndsContendedWithNoOverCommit()
      throws Exception {
    try (InMemoryScenarioBackend backend = new InMemoryScenarioBackend();
        LogCapture log = LogCapture.start()) {
      LockRemovedBeforeBinding.Outcome o =
          LockRemovedBeforeBinding.run(backend, VendorRegistry.discover(), "t4");
      assertThat(
              log.expect(
                  "WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* on t4 is no longer held"))
          .hasSize(1);

      assertThat(o.a().outcome()).as("%s", o).isEqualTo(BindOutcome.CONTENDED);
      assertThat(o.a().reason()).contains("no longer held by pod " + Scenario.NAMESPACE + "/a");
      assertThat(o.bindings()).containsExactly("b->t4");
      assertThat(o.unmet()).isEmpty();
    }
  }
}
