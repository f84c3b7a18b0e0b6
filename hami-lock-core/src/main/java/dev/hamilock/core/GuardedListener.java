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
    guard("acquired", node, () -> delegate.acquired(node, key, owner, outcome));
  }

  @Override
  public void contended(LockContentionException contention) {
    guard("contended", contention.node(), () -> delegate.contended(contention));
  }

  @Override
  public void released(String node, String key, LockOwner owner) {
    guard("released", node, () -> delegate.released(node, key, owner));
  }

  @Override
  public void takenOver(
      String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {
    guard("takenOver", node, () -> delegate.takenOver(node, key, owner, previousValue, reason));
  }

  @Override
  public void waited(
      String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
    guard("waited", node, () -> delegate.waited(node, owner, waited, attempts, acquired));
  }

  private void guard(String event, String node, Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      String why = "node lock listener {} failed on event {} for node {} (ignored): {}";
      LOG.warn(why, delegate, event, node, e.toString());
    }
  }

  @Override
  public String toString() {
    return "guarded(" + delegate + ")";
  }
}
