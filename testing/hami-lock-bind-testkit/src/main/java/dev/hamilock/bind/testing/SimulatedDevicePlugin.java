package dev.hamilock.bind.testing;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.HandoffResult;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The kubelet and HAMi-style device plugin of one node, simulated: pods bound to the node are
 * {@linkplain #admit admitted} in binding order; for each, after the pod's Allocate time (scaled by
 * {@code timeScale}), the plugin performs the {@link DevicePluginHandoff} — or reports a failed
 * Allocate — and records in the {@link PhysicalLedger} what the kubelet's pod physically received.
 * As in reality, the plugin does not know which pod the kubelet is starting: it finds one through
 * the lock or the fallback list. Run {@link #run()} on one thread; {@link #shutdown()} ends it
 * after everything admitted before has been served.
 */
public final class SimulatedDevicePlugin implements Runnable {
  private static final Admission POISON = new Admission("", "", 0, false, false);

  private record Admission(
      String namespace, String name, long delayNanos, boolean fail, boolean stall) {}

  /**
   * What a stalled Allocate does before it proceeds (e.g. move the locks' clock past the timeout).
   */
  @FunctionalInterface
  public interface Stall {
    /**
     * Runs while the Allocate of {@code namespace/name} is stalled.
     *
     * @throws InterruptedException if interrupted
     */
    void stall(String namespace, String name) throws InterruptedException;
  }

  private final String node;
  private final DevicePluginHandoff handoff;
  private final PhysicalLedger ledger;
  private final double timeScale;
  private final BlockingQueue<Admission> queue = new LinkedBlockingQueue<>();
  private final Stall stall;

  /**
   * @param handoff the hand-off (its lock must be the node lock the binders use)
   * @param ledger where to record what was handed out
   * @param timeScale factor applied to Allocate times (e.g. 0.01: 30 ms becomes 300 µs); &ge; 0
   * @param stall what a stalled Allocate ({@link #admit(String, String, int, boolean, boolean)})
   *     runs before it proceeds
   */
  public SimulatedDevicePlugin(
      String node,
      DevicePluginHandoff handoff,
      PhysicalLedger ledger,
      double timeScale,
      Stall stall) {
    this.stall = Objects.requireNonNull(stall, "stall");
    checkArgument(timeScale >= 0, "timeScale must not be negative: %s", timeScale);
    this.node = node;
    this.handoff = handoff;
    this.ledger = ledger;
    this.timeScale = timeScale;
  }

  /**
   * The kubelet starts a pod bound to this node; its Allocate may stall (HAMi#3096).
   *
   * @param allocateDelayMicros its (unscaled) Allocate time in µs
   * @param fail whether its Allocate fails
   * @param stalls whether its Allocate first runs the plugin's {@link Stall}
   */
  public void admit(
      String namespace, String name, int allocateDelayMicros, boolean fail, boolean stalls) {
    queue.add(
        new Admission(
            namespace, name, (long) (allocateDelayMicros * 1000L * timeScale), fail, stalls));
  }

  /** Ends {@link #run()} once everything admitted so far has been served. */
  public void shutdown() {
    queue.add(POISON);
  }

  @Override
  public void run() {
    while (true) {
      Admission a;
      try {
        a = queue.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (a == POISON) {
        return;
      }
      if (a.delayNanos > 0) {
        LockSupport.parkNanos(a.delayNanos);
      }
      if (a.stall) {
        try {
          stall.stall(a.namespace, a.name);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      HandoffResult r =
          a.fail ? handoff.fail(node, "simulated Allocate failure") : handoff.allocateAll(node);
      ledger.record(node, a.namespace + "/" + a.name, r);
    }
  }
}
