package dev.hamilock.core.acquire;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A NodeLock whose acquire outcome is scripted per call; every call is appended to a shared log.
 */
final class ScriptedLock implements NodeLock {

  interface Script {
    void onAcquire(int call) throws NodeLockException;
  }

  private final String key;
  private final List<String> log;
  private final Script script;
  private final LockBackendException releaseError;
  final AtomicInteger acquireCalls = new AtomicInteger();
  final AtomicInteger releaseCalls = new AtomicInteger();

  ScriptedLock(String key, List<String> log, Script script, LockBackendException releaseError) {
    this.key = key;
    this.log = log;
    this.script = script;
    this.releaseError = releaseError;
  }

  static ScriptedLock ok(String key, List<String> log) {
    return new ScriptedLock(key, log, call -> {}, null);
  }

  static LockContentionException contention(String key) {
    return new LockContentionException(
        "node n is locked",
        "n",
        key,
        Optional.of("2026-08-01T06:00:00Z,ns,x"),
        Optional.empty(),
        Optional.empty(),
        null);
  }

  @Override
  public String key() {
    return key;
  }

  @Override
  public Duration lockTimeout() {
    return Duration.ofMinutes(5);
  }

  @Override
  public AcquireOutcome acquire(String node, LockOwner owner)
      throws LockContentionException, LockBackendException {
    synchronized (log) {
      log.add("lock:" + key);
    }
    try {
      script.onAcquire(acquireCalls.incrementAndGet());
    } catch (LockContentionException | LockBackendException e) {
      throw e;
    } catch (NodeLockException e) {
      throw new IllegalStateException(e);
    }
    return AcquireOutcome.ACQUIRED;
  }

  @Override
  public boolean release(String node, LockOwner owner) throws LockBackendException {
    synchronized (log) {
      log.add("release:" + key);
    }
    releaseCalls.incrementAndGet();
    if (releaseError != null) {
      throw releaseError;
    }
    return true;
  }

  @Override
  public Optional<LockRecord> read(String node) {
    return Optional.empty();
  }
}
