package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The defaults of {@link NodeLock} for implementations other than StoreNodeLock: the raw value
 * re-formatted, and no {@link ObservedValueRelease} capability.
 */
class NodeLockDefaultsTest {

  private static final LockOwner OWNER = LockOwner.of("ns", "pod-a");

  /** A lock that records release calls and reads a fixed answer. */
  private static final class MinimalLock implements NodeLock {
    final List<String> calls = new ArrayList<>();
    Optional<String> value = Optional.empty();

    @Override
    public String key() {
      return DEFAULT_KEY;
    }

    @Override
    public Duration lockTimeout() {
      return DEFAULT_LOCK_TIMEOUT;
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner) {
      return AcquireOutcome.ACQUIRED;
    }

    @Override
    public boolean release(String node, LockOwner owner) {
      calls.add("release " + node + " " + owner.name());
      return true;
    }

    @Override
    public Optional<LockRecord> read(String node) throws MalformedLockException {
      calls.add("read " + node);
      return value.isEmpty() ? Optional.empty() : Optional.of(LockRecordCodec.parse(value.get()));
    }
  }

  @Test
  void aLockOffersNoObservedValueReleaseUnlessItImplementsOne() {
    MinimalLock lock = new MinimalLock();

    assertThat(lock.observedValueRelease()).isEmpty();
    assertThat(lock.calls).isEmpty();
  }

  @Test
  void readValueReformatsTheRecordAndReturnsMalformedTextAsReported() throws Exception {
    MinimalLock lock = new MinimalLock();
    assertThat(lock.readValue("n1")).isEmpty();
    lock.value =
        Optional.of(
            LockRecordCodec.format(LockRecord.of(Instant.parse("2026-08-01T06:00:00Z"), OWNER)));
    assertThat(lock.readValue("n1")).contains("2026-08-01T06:00:00Z,ns,pod-a");
    lock.value = Optional.of("lock");
    assertThat(lock.readValue("n1")).contains("lock");
  }
}
