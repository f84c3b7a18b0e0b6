package dev.hamilock.core.store;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockReleaseSignal;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The reference {@link LockStore}: values in a {@link ConcurrentHashMap}, one per (node, key), with
 * a {@link FairReleaseQueue} told of every release (a successful delete). Compare-and-set witnesses
 * are exact (seen atomically with the write). Every node exists. It serves as the embedded default
 * (a single scheduler process) and as the backend for fast tests. Thread-safe; never throws.
 */
public final class InMemoryLockStore implements LockStore {

  private final ConcurrentMap<Slot, String> values = new ConcurrentHashMap<>();
  private final FairReleaseQueue releases = FairReleaseQueue.create();

  /** Creates an empty store. */
  public InMemoryLockStore() {}

  @Override
  public Optional<String> read(String node, String key) {
    return Optional.ofNullable(values.get(new Slot(node, key)));
  }

  /** {@inheritDoc} Here the witness is exact: the value {@code putIfAbsent} found. */
  @Override
  public CasResult createIfAbsent(String node, String key, String value) {
    Objects.requireNonNull(value, "value");
    String present = values.putIfAbsent(new Slot(node, key), value);
    if (present != null) {
      return CasResult.found(present);
    }
    return CasResult.written();
  }

  /** {@inheritDoc} Here the witness is exact: the value seen inside one atomic {@code compute}. */
  @Override
  public CasResult replaceIfEquals(String node, String key, String expected, String value) {
    Objects.requireNonNull(expected, "expected");
    Objects.requireNonNull(value, "value");
    String[] witness = new String[1];
    values.computeIfPresent(
        new Slot(node, key),
        (slot, current) -> {
          witness[0] = current;
          return current.equals(expected) ? value : current;
        });
    if (!expected.equals(witness[0])) {
      return CasResult.notWritten(Optional.ofNullable(witness[0]));
    }
    return CasResult.written();
  }

  @Override
  public boolean deleteIfEquals(String node, String key, String expected) {
    Objects.requireNonNull(expected, "expected");
    boolean removed = values.remove(new Slot(node, key), expected);
    if (removed) {
      releases.released(node);
    }
    return removed;
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return Optional.of(releases);
  }

  private record Slot(String node, String key) {
    Slot {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(key, "key");
    }
  }
}
