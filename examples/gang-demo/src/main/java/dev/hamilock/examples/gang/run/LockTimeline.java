package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.ObservedValueRelease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Records who held which node lock when, by decorating the {@link NodeLock}s of every endpoint
 * (scheduler replicas acquire, device plugins release): a hold starts when an acquire attempt
 * returns an {@link AcquireOutcome} (the lock write was applied before that) and ends when its
 * owner's successful release was <em>sent</em> (it is applied after that). Each recorded hold
 * therefore lies inside the true one, and two holds of one lock never overlap in the record. Times
 * are ms since the run's origin ({@link System#nanoTime()}). Contended attempts are counted per
 * node. Thread-safe.
 */
public final class LockTimeline {

  /**
   * One lock hold.
   *
   * @param node the node
   * @param key the lock key ({@code hami.io/mutex.lock})
   * @param pod {@code namespace/name} of the holder
   * @param acquiredMs when the acquiring write returned, ms since the origin (in {@link
   *     ModeResult#holds()}: since the run's time zero)
   * @param releasedMs when the releasing write was sent, same origin; empty if still held at the
   *     end
   * @param acquiredBy the endpoint that acquired it ({@code replica-1})
   * @param releasedBy the endpoint that released it ({@code device-plugin/node-a}), "" if held
   */
  public record Hold(
      String node,
      String key,
      String pod,
      double acquiredMs,
      Optional<Double> releasedMs,
      String acquiredBy,
      String releasedBy) {
    /** Validates. */
    public Hold {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(pod, "pod");
      Objects.requireNonNull(releasedMs, "releasedMs");
      Objects.requireNonNull(acquiredBy, "acquiredBy");
      Objects.requireNonNull(releasedBy, "releasedBy");
    }

    /**
     * @param deltaMs ms to add to both ends (negative to move the origin later)
     * @return this hold with {@code acquiredMs} and {@code releasedMs} moved by {@code deltaMs}
     */
    public Hold shiftedBy(double deltaMs) {
      return new Hold(
          node,
          key,
          pod,
          acquiredMs + deltaMs,
          releasedMs.map(r -> r + deltaMs),
          acquiredBy,
          releasedBy);
    }
  }

  private final long originNanos;
  private final Map<String, Hold> open = new HashMap<>();
  private final List<Hold> closed = new ArrayList<>();
  private final Map<String, Integer> contended = new HashMap<>();

  /**
   * @param originNanos {@link System#nanoTime()} of the run's time zero
   */
  public LockTimeline(long originNanos) {
    this.originNanos = originNanos;
  }

  /**
   * @return ms since the origin, now
   */
  public double nowMs() {
    return (System.nanoTime() - originNanos) / 1e6;
  }

  /**
   * @param locks an endpoint's locks
   * @param endpoint the endpoint's name
   * @return the same locks, recorded
   */
  public NodeLockProvider wrap(NodeLockProvider locks, String endpoint) {
    Objects.requireNonNull(locks, "locks");
    return NodeLockProvider.cached(key -> new Recorded(locks.forKey(key), endpoint));
  }

  /**
   * @return every hold, by acquisition time (still-open holds have no release time)
   */
  public synchronized List<Hold> holds() {
    List<Hold> out = new ArrayList<>(closed);
    out.addAll(open.values());
    out.sort(Comparator.comparingDouble(Hold::acquiredMs));
    return out;
  }

  /**
   * @return contended acquire attempts per node
   */
  public synchronized Map<String, Integer> contendedAttempts() {
    return Map.copyOf(contended);
  }

  private static String id(String node, String key, LockOwner owner) {
    return node + "|" + key + "|" + owner.namespace() + "/" + owner.name();
  }

  private synchronized void acquired(String node, String key, LockOwner owner, String endpoint) {
    open.putIfAbsent(
        id(node, key, owner),
        new Hold(
            node,
            key,
            owner.namespace() + "/" + owner.name(),
            nowMs(),
            Optional.empty(),
            endpoint,
            ""));
  }

  private synchronized void released(
      String node, String key, LockOwner owner, String endpoint, double sentMs) {
    Hold h = open.remove(id(node, key, owner));
    if (h != null) {
      closed.add(
          new Hold(
              h.node(),
              h.key(),
              h.pod(),
              h.acquiredMs(),
              Optional.of(sentMs),
              h.acquiredBy(),
              endpoint));
    }
  }

  private synchronized void contended(String node) {
    contended.merge(node, 1, Integer::sum);
  }

  /** The recording decorator. */
  private final class Recorded implements NodeLock {
    private final NodeLock delegate;
    private final String endpoint;

    Recorded(NodeLock delegate, String endpoint) {
      this.delegate = delegate;
      this.endpoint = endpoint;
    }

    @Override
    public String key() {
      return delegate.key();
    }

    @Override
    public Duration lockTimeout() {
      return delegate.lockTimeout();
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner)
        throws LockContentionException, LockBackendException {
      try {
        AcquireOutcome o = delegate.acquire(node, owner);
        acquired(node, delegate.key(), owner, endpoint);
        return o;
      } catch (LockContentionException e) {
        contended(node);
        throw e;
      }
    }

    @Override
    public boolean release(String node, LockOwner owner) throws LockBackendException {
      double sent = nowMs();
      boolean r = delegate.release(node, owner);
      if (r) {
        released(node, delegate.key(), owner, endpoint, sent);
      }
      return r;
    }

    @Override
    public boolean stillHeld(String node, LockOwner owner) throws LockBackendException {
      return delegate.stillHeld(node, owner);
    }

    @Override
    public Optional<ObservedValueRelease> observedValueRelease() {
      return delegate
          .observedValueRelease()
          .map(
              byValue ->
                  (node, owner, observedValue) -> {
                    double sent = nowMs();
                    boolean r = byValue.release(node, owner, observedValue);
                    if (r) {
                      released(node, delegate.key(), owner, endpoint, sent);
                    }
                    return r;
                  });
    }

    @Override
    public Optional<LockRecord> read(String node)
        throws MalformedLockException, LockBackendException {
      return delegate.read(node);
    }

    @Override
    public Optional<String> readValue(String node) throws LockBackendException {
      return delegate.readValue(node);
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return delegate.releaseSignal();
    }

    @Override
    public String toString() {
      return "Recorded[" + delegate + " by " + endpoint + "]";
    }
  }
}
