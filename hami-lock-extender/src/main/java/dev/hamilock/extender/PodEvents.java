package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLockListener;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warning Events on pods ({@code NodeLockWaitTimedOut}, {@code NodeLockTakenOver}, {@code
 * BindFailed}, and those of the flows whose writer it wraps), deduplicated within {@link
 * #DEDUP_WINDOW} and rate-limited per pod by a token bucket ({@link #BURST}, {@link #REFILL}) as
 * client-go's {@code EventCorrelator}. A failed write is logged at DEBUG, never fails the verb.
 * Thread-safe.
 */
public final class PodEvents extends ForwardingCluster implements NodeLockListener {
  private static final Logger LOG = LoggerFactory.getLogger(PodEvents.class);

  /** Same pod + reason + message within this window is sent once: 10 min. */
  public static final Duration DEDUP_WINDOW = Duration.ofMinutes(10);

  /** Events a pod may get at once: 25. */
  public static final int BURST = 25;

  /** One more Event per pod after this: 5 min. */
  public static final Duration REFILL = Duration.ofMinutes(5);

  private static final int MAX_KEYS = 4096;

  private final InstantSource clock;
  private final Map<String, Instant> lastSent = lru();
  private final Map<String, double[]> buckets = lru();
  private long suppressed;

  /** Events go to {@code writer}'s {@link ClusterWriter#recordPodEvent}. */
  public PodEvents(ClusterWriter writer, InstantSource clock) {
    super(null, Objects.requireNonNull(writer, "writer"));
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** An LRU map of at most {@code MAX_KEYS} entries. */
  private static <V> Map<String, V> lru() {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, V> e) {
        return size() > MAX_KEYS;
      }
    };
  }

  @Override
  public void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message)
      throws ClusterException {
    if (admit(namespace + "/" + name, reason, message)) {
      super.recordPodEvent(namespace, name, uid, type, reason, CallerMessages.safe(message));
    }
  }

  /** Records without throwing (lock events and the bind verb must not fail because of an Event). */
  void warn(String namespace, String name, String uid, String reason, String message) {
    try {
      recordPodEvent(namespace, name, uid, "Warning", reason, message);
    } catch (ClusterException e) { // the delegate's unchecked ones too (ForwardingCluster)
      LOG.atDebug()
          .addKeyValue("pod", namespace + "/" + name)
          .addKeyValue("reason", reason)
          .log("event not recorded: {}", e.getMessage());
    }
  }

  private synchronized boolean admit(String pod, String reason, String message) {
    Instant now = clock.instant();
    String key = pod + "\u0000" + reason + "\u0000" + message;
    Instant last = lastSent.get(key);
    if (last != null && Duration.between(last, now).compareTo(DEDUP_WINDOW) < 0) {
      suppressed++;
      return false;
    }
    double[] b = buckets.computeIfAbsent(pod, k -> new double[] {BURST, now.toEpochMilli()});
    double refill = (now.toEpochMilli() - b[1]) / (double) REFILL.toMillis();
    b[0] = Math.min(BURST, b[0] + Math.max(0, refill));
    b[1] = now.toEpochMilli();
    if (b[0] < 1) {
      suppressed++;
      return false;
    }
    b[0] -= 1;
    lastSent.put(key, now);
    return true;
  }

  /** Events dropped by the dedup window or the spam filter so far. */
  public synchronized long suppressed() {
    return suppressed;
  }

  @Override
  public void waited(
      String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
    if (!acquired) {
      warn(
          owner.namespace(),
          owner.name(),
          owner.uid().orElse(""),
          "NodeLockWaitTimedOut",
          "gave up waiting for the node lock of %s after %d ms (%d attempts)"
              .formatted(node, waited.toMillis(), attempts));
    }
  }

  @Override
  public void takenOver(
      String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {
    warn(
        owner.namespace(),
        owner.name(),
        owner.uid().orElse(""),
        "NodeLockTakenOver",
        "took over the %s lock %s of node %s (previous holder: %s)"
            .formatted(
                reason == AcquireOutcome.TOOK_OVER_EXPIRED ? "expired" : "dangling",
                key,
                node,
                previousValue));
  }

  /** The bind verb's failure (the flow's reason) as an Event on the pod; {@code uid} may be "". */
  public void bindFailed(String namespace, String name, String uid, String node, String reason) {
    warn(namespace, name, uid, "BindFailed", "bind to node " + node + " failed: " + reason);
  }
}
