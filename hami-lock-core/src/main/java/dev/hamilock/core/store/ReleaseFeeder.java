package dev.hamilock.core.store;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockReleaseSignal;
import java.time.Duration;
import java.util.Optional;

/**
 * The release half of a {@link LockBackend}: something that sees lock values disappear (a watch or
 * informer on the objects holding the lock) and feeds one {@link FairReleaseQueue} per lock key, so
 * a waiting gang member wakes one round trip after a release instead of on its next poll (design
 * decision 3; HAMi polls every 100 ms, {@code pkg/scheduler/scheduler.go}). One feeder serves every
 * lock key of a client. client-java's is {@code NodeLockWatch} (one node watch); a second client
 * plugs its own watch or informer here.
 *
 * <p>Lifecycle: create the queues of every key ({@link #releaseSignal}) before {@link #start()} (a
 * key added later may cost a relist), then {@link #close()}. Implementations are thread-safe.
 */
public interface ReleaseFeeder extends AutoCloseable {

  /**
   * @param key the lock key, e.g. {@code hami.io/mutex.lock}; non-blank
   * @return the key's wake-up queue (the same instance for the same key); it reports itself {@link
   *     LockReleaseSignal#isReliable reliable} only while this feeder's view is synced and live
   * @throws IllegalStateException if closed and {@code key} is new
   */
  FairReleaseQueue releaseSignal(String key);

  /**
   * The lock value this feeder currently shows, offered only while it is reliable. May lag the
   * server by the event delivery time: use it only where a stale value is safe (the expected value
   * of a compare-and-set, or a decision to wait).
   *
   * @return the observed value; empty if unlocked, unknown, or the feeder is not reliable now
   */
  Optional<String> observedLockValue(String node, String key);

  /**
   * The version of {@code node}'s object (its {@code metadata.resourceVersion}) in this feeder's
   * last event of it, if that event showed {@code key} absent; offered only while reliable.
   *
   * @return the version; empty if locked, unknown (e.g. no event since the last listing), or the
   *     feeder is not reliable now (the default: never offered)
   */
  default Optional<String> observedFreeVersion(String node, String key) {
    return Optional.empty();
  }

  /**
   * Starts feeding (e.g. the watch thread); idempotent.
   *
   * @return this feeder
   * @throws IllegalStateException if closed
   */
  ReleaseFeeder start();

  /** {@return whether the feeder's stream is live right now} */
  boolean isConnected();

  /**
   * @param timeout the longest wait; not negative
   * @return whether the first listing was applied and the stream opened within {@code timeout}
   * @throws InterruptedException if interrupted while waiting
   */
  boolean awaitSynced(Duration timeout) throws InterruptedException;

  /** {@return how many times the feeder (re)listed the objects, including the first} */
  long relistCount();

  /** {@return how many releases (value present, then absent) it has signalled, over all keys} */
  long releaseCount();

  /** Stops feeding and joins its threads; idempotent. Queues then stop being reliable. */
  @Override
  void close();
}
