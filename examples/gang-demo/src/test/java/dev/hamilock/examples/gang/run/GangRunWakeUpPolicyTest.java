package dev.hamilock.examples.gang.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.Waiter;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.examples.gang.input.InputLoader;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The in-memory and the emulator backends of the demo wait on the same wake-up policy — core's fair
 * per-node {@link FairReleaseQueue} — so the demo's in-memory figures and its Kubernetes figures
 * differ in transport only; a release hands a wake-up to a queued waiter on both (on the emulator
 * through the replica's node watch, whichever of its first LIST and the release comes first: a
 * relist wakes the first waiter of every free node).
 */
class GangRunWakeUpPolicyTest {

  @Test
  void bothBackendsWakeWaitersThroughCoresFairQueue() throws Exception {
    VendorRegistry registry = VendorRegistry.discover();
    DemoInput input = new InputLoader(registry).builtIn();
    String node = input.nodes().get(0).view().name();
    LockOwner holder = LockOwner.of("default", "holder");
    for (DemoBackend backend :
        new DemoBackend[] {new InMemoryBackend(), new EmulatorBackend(registry)}) {
      try (backend) {
        backend.seed(input);
        Endpoint replica = backend.endpoint("replica-0", true);
        try {
          NodeLock lock = replica.locks().forKey(NodeLock.DEFAULT_KEY);
          assertThat(lock.releaseSignal())
              .as(backend.description())
              .hasValueSatisfying(s -> assertThat(s).isInstanceOf(FairReleaseQueue.class));
          lock.acquire(node, holder);
          try (Waiter w = lock.releaseSignal().orElseThrow().join(node)) {
            lock.release(node, holder);
            assertThat(w.await(Duration.ofSeconds(10)))
                .as(backend.description() + ": release wakes the waiter")
                .isTrue();
          }
        } finally {
          replica.closer().close();
        }
      }
    }
  }
}
