package dev.hamilock.examples.gang.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.examples.gang.DemoOptions;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.examples.gang.input.InputLoader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Every replica's bind flow reports the end of each acquire to its endpoint's lock listener (for
 * the emulator backend its lock stacks' {@code queueListener()}, which ends the waiter's place in the
 * fair per-node wake-up queue of that replica's lock stack).
 */
class GangRunLockListenerTest {

  @Test
  void everyReplicasBinderReportsTheEndOfEachAcquireToItsEndpointsListener() throws Exception {
    VendorRegistry registry = VendorRegistry.discover();
    DemoInput input = new InputLoader(registry).builtIn();
    GangRun runner = new GangRun(registry, new GangRun.Settings(2, 20, RetryPolicy.defaults(), 1.0, 6));
    Map<String, NodeLockListener> given = new ConcurrentHashMap<>();
    List<String> heard = new CopyOnWriteArrayList<>();
    ModeResult r;
    try (Recording backend = new Recording(new EmulatorBackend(registry), given, heard)) {
      r = runner.run(input, DemoOptions.Mode.GANG, backend);
    }
    assertThat(r.allBound()).isTrue();
    // the Kubernetes stack hands its queue listener to the replicas that wait for locks
    assertThat(given).containsKeys("replica-0", "replica-1");
    assertThat(given.get("replica-0")).isNotSameAs(NodeLockListener.NOOP);
    // one acquire end per member, from the replica that bound it, on the node it was bound to
    assertThat(heard).hasSize(4);
    for (MemberResult m : r.members()) {
      assertThat(heard).as(m.pod()).containsOnlyOnce("replica-" + m.replica() + " " + m.node() + " " + m.pod()
          + " acquired=true attempts=" + m.lockAttempts());
    }
  }

  /** Delegates to a backend; every endpoint's listener also records {@code waited}. */
  private record Recording(DemoBackend delegate, Map<String, NodeLockListener> given, List<String> heard)
      implements DemoBackend {
    @Override
    public Endpoint endpoint(String name, boolean waitsForLocks) throws Exception {
      Endpoint e = delegate.endpoint(name, waitsForLocks);
      given.put(name, e.lockListener());
      NodeLockListener recorder = new NodeLockListener() {
        @Override
        public void waited(String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
          heard.add(name + " " + node + " " + owner.namespace() + "/" + owner.name() + " acquired=" + acquired
              + " attempts=" + attempts);
        }
      };
      return new Endpoint(e.name(), e.reader(), e.writer(), e.locks(),
          NodeLockListener.all(List.of(e.lockListener(), recorder)), e.closer());
    }

    @Override
    public String description() {
      return delegate.description();
    }

    @Override
    public void seed(DemoInput input) throws Exception {
      delegate.seed(input);
    }

    @Override
    public boolean simulatesDevicePlugins() {
      return delegate.simulatesDevicePlugins();
    }

    @Override
    public void resetCounters() {
      delegate.resetCounters();
    }

    @Override
    public Map<String, Long> requestsByVerb() {
      return delegate.requestsByVerb();
    }

    @Override
    public List<ClusterPod> pods(DemoInput input) throws Exception {
      return delegate.pods(input);
    }

    @Override
    public List<NodeView> nodes(DemoInput input) throws Exception {
      return delegate.nodes(input);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
