package dev.hamilock.core;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forwards every event to each target in order ({@link NodeLockListener#all}); when guarded ({@link
 * NodeLockListener#guarded}), a target's failure is logged instead of propagated.
 */
final class ForwardingListener implements NodeLockListener {

  private static final Logger LOG = LoggerFactory.getLogger(NodeLockListener.class);

  private final List<NodeLockListener> targets;
  final boolean guarded;

  ForwardingListener(List<NodeLockListener> targets, boolean guarded) {
    this.targets = targets;
    this.guarded = guarded;
  }

  @Override
  public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
    each("acquired", node, l -> l.acquired(node, key, owner, outcome));
  }

  @Override
  public void contended(LockContentionException contention) {
    each("contended", contention.node(), l -> l.contended(contention));
  }

  @Override
  public void released(String node, String key, LockOwner owner) {
    each("released", node, l -> l.released(node, key, owner));
  }

  @Override
  public void takenOver(
      String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {
    each("takenOver", node, l -> l.takenOver(node, key, owner, previousValue, reason));
  }

  @Override
  public void waited(
      String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
    each("waited", node, l -> l.waited(node, owner, waited, attempts, acquired));
  }

  private void each(String event, String node, Consumer<NodeLockListener> call) {
    for (NodeLockListener l : targets) {
      try {
        call.accept(l);
      } catch (RuntimeException e) {
        if (!guarded) {
          throw e;
        }
        String why = "node lock listener {} failed on event {} for node {} (ignored): {}";
        LOG.warn(why, l, event, node, e.toString());
      }
    }
  }

  @Override
  public String toString() {
    return guarded ? "guarded(" + targets.get(0) + ")" : "NodeLockListener.all" + targets;
  }
}
