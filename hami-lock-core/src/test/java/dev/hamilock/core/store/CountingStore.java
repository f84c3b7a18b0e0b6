package dev.hamilock.core.store;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockReleaseSignal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** Wraps a store, records each call by name, and can run a hook before a call (to inject races). */
final class CountingStore implements LockStore {
  final InMemoryLockStore delegate = new InMemoryLockStore();
  final List<String> calls = new ArrayList<>();
  Runnable beforeNextWrite;

  /** The watched view {@link #watchedValue} answers from (a watch stand-in); none by default. */
  volatile Function<String, Optional<String>> view = node -> Optional.empty();

  private synchronized void record(String call) {
    calls.add(call);
  }

  private void hook() {
    Runnable r = beforeNextWrite;
    beforeNextWrite = null;
    if (r != null) {
      r.run();
    }
  }

  synchronized List<String> calls() {
    return List.copyOf(calls);
  }

  @Override
  public Optional<String> read(String node, String key) {
    record("read");
    return delegate.read(node, key);
  }

  @Override
  public CasResult createIfAbsent(String node, String key, String value) {
    record("create");
    hook();
    return delegate.createIfAbsent(node, key, value);
  }

  @Override
  public CasResult replaceIfEquals(String node, String key, String expected, String value) {
    record("replace");
    hook();
    return delegate.replaceIfEquals(node, key, expected, value);
  }

  @Override
  public boolean deleteIfEquals(String node, String key, String expected)
      throws LockBackendException {
    record("delete");
    hook();
    return delegate.deleteIfEquals(node, key, expected);
  }

  @Override
  public Optional<String> watchedValue(String node, String key) {
    return view.apply(node);
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return delegate.releaseSignal();
  }
}
