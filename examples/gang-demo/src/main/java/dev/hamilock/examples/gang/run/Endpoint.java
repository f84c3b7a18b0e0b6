package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.device.spi.VendorRegistry;
import java.util.Objects;

/**
 * One process's view of the cluster: what a scheduler replica or a device plugin would have —
 * its own client (reads, writes) and its own node-lock instances. Replicas never share an
 * endpoint, so the only thing they share is the cluster itself, as in production.
 *
 * @param name who uses it, e.g. {@code replica-0}, {@code device-plugin/node-a}
 * @param reader fresh reads
 * @param writer pod patches and bindings
 * @param locks the node locks of this process
 * @param lockListener what every acquire loop over {@code locks} must report to: for the
 *     Kubernetes backends the lock stacks' {@code queueListener()}, which ends a waiter's place in
 *     the per-node fair wake-up queue of this endpoint's lock stack when its acquire call ends;
 *     {@link NodeLockListener#NOOP} for backends without such a queue
 * @param closer releases the endpoint's resources (watch threads, connection pools)
 */
public record Endpoint(String name, ClusterReader reader, ClusterWriter writer, NodeLockProvider locks,
    NodeLockListener lockListener, AutoCloseable closer) {
  /** Validates. */
  public Endpoint {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reader, "reader");
    Objects.requireNonNull(writer, "writer");
    Objects.requireNonNull(locks, "locks");
    Objects.requireNonNull(lockListener, "lockListener");
    Objects.requireNonNull(closer, "closer");
  }

  /**
   * A bind flow on this endpoint, reporting to its {@link #lockListener()}, so a replica cannot
   * forget it.
   *
   * @param registry the vendors
   * @param locks this endpoint's {@link #locks()}, possibly decorated (e.g. recorded by a
   *     {@link LockTimeline}); the listener is only right for locks of this endpoint
   * @return a builder with this endpoint's reader, writer and lock listener set
   */
  public PodBinder.Builder podBinder(VendorRegistry registry, NodeLockProvider locks) {
    return PodBinder.builder(reader, writer, registry, locks).lockListener(lockListener);
  }
}
