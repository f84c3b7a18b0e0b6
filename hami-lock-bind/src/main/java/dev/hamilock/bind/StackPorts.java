package dev.hamilock.bind;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.ForwardingCluster;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The stack's ports behind a gate refusing reads once closed ({@code REJECTED}) or on an
 * interrupted thread ({@code INTERRUPTED}); writes pass, so a flow in flight can clean up.
 */
final class StackPorts extends ForwardingCluster {
  private final ClusterWriter writer;
  private final AtomicBoolean closed;

  StackPorts(ClusterReader reader, ClusterWriter writer) {
    this(reader, writer, new AtomicBoolean());
  }

  private StackPorts(ClusterReader reader, ClusterWriter writer, AtomicBoolean closed) {
    super(reader, writer);
    this.writer = writer;
    this.closed = closed;
  }

  /**
   * The ports as every flow takes them: checked ({@link ForwardingCluster}: a port's unchecked
   * exception is an unknown outcome, never thrown out of a flow); either may be null.
   */
  static ForwardingCluster checked(ClusterReader reader, ClusterWriter writer) {
    return new Checked(reader, writer);
  }

  private static final class Checked extends ForwardingCluster {
    Checked(ClusterReader reader, ClusterWriter writer) {
      super(reader, writer);
    }
  }

  /** The same gate, closed with this one, over {@code other} (e.g. the Filter's cache). */
  StackPorts reading(ClusterReader other) {
    return new StackPorts(other, writer, closed);
  }

  void close() {
    closed.set(true);
  }

  boolean isClosed() {
    return closed.get();
  }

  @Override
  protected void beforeRead(String what) throws ClusterException {
    if (closed.get()) {
      throw new ClusterException(
          ClusterException.Kind.REJECTED,
          "the hami-lock stack is closed (its close() was called); refusing " + what,
          null);
    }
    if (Thread.currentThread().isInterrupted()) {
      throw new ClusterException(
          ClusterException.Kind.INTERRUPTED,
          "the calling thread was interrupted before " + what,
          null);
    }
  }

  @Override
  public String toString() {
    return "StackPorts[" + writer + (closed.get() ? ", closed" : "") + "]";
  }
}
