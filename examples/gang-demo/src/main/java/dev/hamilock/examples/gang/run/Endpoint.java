package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.device.spi.VendorRegistry;
import java.util.Objects;

/**
 * One process's view of the cluster: what a scheduler replica or a device plugin would have — its
 * own client (reads, writes) and its own node-lock instances. Replicas never share an endpoint, so
 * the only thing they share is the cluster itself, as in production.
 *
 * @param name who uses it, e.g. {@code replica-0}, {@code device-plugin/node-a}
 * @param reader fresh reads
 * @param writer pod patches and bindings
 * @param locks the node locks of this process
 * @param closer releases the endpoint's resources (watch threads, connection pools)
 */
public record Endpoint(
    String name,
    ClusterReader reader,
    ClusterWriter writer,
    NodeLockProvider locks,
    AutoCloseable closer) {
  /** Validates. */
  public Endpoint {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reader, "reader");
    Objects.requireNonNull(writer, "writer");
    Objects.requireNonNull(locks, "locks");
    Objects.requireNonNull(closer, "closer");
  }

  /**
   * A bind flow on this endpoint. Its acquire loop holds a waiter handle in the locks' per-node
   * wake-up queue for each acquire call; there is nothing to wire.
   *
   * @param registry the vendors
   * @param locks this endpoint's {@link #locks()}, possibly decorated (e.g. recorded by a {@link
   *     LockTimeline})
   * @return a builder with this endpoint's reader and writer set
   */
  public PodBinder.Builder podBinder(VendorRegistry registry, NodeLockProvider locks) {
    return PodBinder.builder(reader, writer, registry, locks);
  }
}
