package dev.hamilock.core;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link NodeLockListener#guarded}: forwards events, logging instead of propagating listener
 * failures.
 */
final class GuardedListener implements NodeLockListener {

  private static final Logger LOG = LoggerFactory.getLogger(NodeLockListener.class);

  private final NodeLockListener delegate;

  GuardedListener(NodeLockListener delegate) {
    this.delegate = delegate;
  }

  @Override
  public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
    try {
      delegate.acquired(node, key, owner, outcome);
    } catch (RuntimeException e) {
      failed("acquired", node, e);
    }
  }

  @Override
  public void contended(LockContentionException contention) {
    try {
      delegate.contended(contention);
    } catch (RuntimeException e) {
      failed("contended", contention.node(), e);
    }
  }

  @Override
  public void released(String node, String key, LockOwner owner) {
    try {
      delegate.released(node, key, owner);
    } catch (RuntimeException e) {
      failed("released", node, e);
    }
  }

  @Override
  public void takenOver(
      String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {
    try {
      delegate.takenOver(node, key, owner, previousValue, reason);
    } catch (RuntimeException e) {
      failed("takenOver", node, e);
    }
  }

  @Override
  public void waited(
      String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
    try {
      delegate.waited(node, owner, waited, attempts, acquired);
    } catch (RuntimeException e) {
      failed("waited", node, e);
    }
  }

  private void failed(String event, String node, RuntimeException e) {
    LOG.warn(
        "node lock listener {} failed on event {} for node {} (ignored): {}",
        delegate,
        event,
        node,
        e.toString());
  }

  @Override
  public String toString() {
    return "guarded(" + delegate + ")";
  }
}
