package dev.hamilock.core.store;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockReleaseSignal;
import java.util.Map;
import java.util.Optional;

/**
 * Where a {@link LockStore} enters {@link StoreNodeLock}: an unchecked exception from it (a
 * client's bug, an answer it does not map) becomes {@link LockBackendException.Kind#UNAVAILABLE},
 * an outcome unknown, as a timeout is. So no flow above needs a catch of its own for it: an
 * acquire, a confirmation or a release then fails typed, and a bind cleans up instead of leaving
 * its lock.
 */
record CheckedLockStore(LockStore store) implements LockStore {
  @FunctionalInterface
  private interface Call<T> {
    T run() throws LockBackendException;
  }

  private <T> T checked(String what, String node, Call<T> call) throws LockBackendException {
    try {
      return call.run();
    } catch (RuntimeException e) {
      String why = "%s threw on %s of node %s: %s".formatted(store, what, node, e);
      throw new LockBackendException(LockBackendException.Kind.UNAVAILABLE, why, e);
    }
  }

  @Override
  public Optional<String> read(String node, String key) throws LockBackendException {
    return checked("a read", node, () -> store.read(node, key));
  }

  @Override
  public Optional<Map<String, String>> readAll(String node) throws LockBackendException {
    return checked("a read", node, () -> store.readAll(node));
  }

  @Override
  public CasResult createIfAbsent(String node, String key, String value)
      throws LockBackendException {
    return checked("a create", node, () -> store.createIfAbsent(node, key, value));
  }

  @Override
  public CasResult replaceIfEquals(String node, String key, String expected, String value)
      throws LockBackendException {
    return checked("a replace", node, () -> store.replaceIfEquals(node, key, expected, value));
  }

  @Override
  public boolean deleteIfEquals(String node, String key, String expected)
      throws LockBackendException {
    return checked("a delete", node, () -> store.deleteIfEquals(node, key, expected));
  }

  @Override
  public Optional<String> watchedValue(String node, String key) {
    return store.watchedValue(node, key);
  }

  @Override
  public Optional<String> watchedFreeVersion(String node, String key) {
    return store.watchedFreeVersion(node, key);
  }

  @Override
  public CasResult createIfAbsentAt(String node, String key, String value, String version)
      throws LockBackendException {
    return checked("a create", node, () -> store.createIfAbsentAt(node, key, value, version));
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return store.releaseSignal();
  }

  @Override
  public String toString() {
    return store.toString();
  }
}
