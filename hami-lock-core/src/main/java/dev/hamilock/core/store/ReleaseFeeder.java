package dev.hamilock.core.store;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockReleaseSignal;
import java.time.Duration;
import java.util.Optional;

/**
 * The release half of a {@link LockBackend}: a watch that sees lock values disappear and feeds one
 * {@link FairReleaseQueue} per lock key (design decision 3). Create every key's queue before {@link
 * #start()} (a later key may cost a relist), then {@link #close()}. Thread-safe.
 */
public interface ReleaseFeeder extends AutoCloseable {

  /**
   * The wake-up queue of a non-blank {@code key} (the same instance per key), {@link
   * LockReleaseSignal#isReliable reliable} only while this feeder is synced and live.
   *
   * @throws IllegalStateException if closed and {@code key} is new
   */
  FairReleaseQueue releaseSignal(String key);

  /**
   * The lock value this feeder shows, only while reliable; it may lag the server, so use it only
   * where a stale value is safe. Empty if unlocked, unknown or not reliable.
   */
  Optional<String> observedLockValue(String node, String key);

  /**
   * {@code node}'s {@code metadata.resourceVersion} in the feeder's last event of it if that showed
   * {@code key} absent, only while reliable; empty otherwise (the default).
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
   * Whether the first listing was applied and the stream opened within {@code timeout}.
   *
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
