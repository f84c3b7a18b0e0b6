package dev.hamilock.core.store;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockReleaseSignal;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The reference {@link LockStore}: values in a {@link ConcurrentHashMap}, one per (node, key),
 * with a {@link FairReleaseQueue} told of every release (a successful delete). Every node exists. It
 * serves as the embedded default (a single scheduler process) and as the backend for fast tests.
 * Thread-safe; never throws.
 */
public final class InMemoryLockStore implements LockStore {

    private final ConcurrentMap<Slot, String> values = new ConcurrentHashMap<>();
    private final FairReleaseQueue releases = FairReleaseQueue.create();

    /** Creates an empty store. */
    public InMemoryLockStore() {
    }

    @Override
    public Optional<String> read(String node, String key) {
        return Optional.ofNullable(values.get(new Slot(node, key)));
    }

    @Override
    public boolean createIfAbsent(String node, String key, String value) {
        Objects.requireNonNull(value, "value");
        boolean written = values.putIfAbsent(new Slot(node, key), value) == null;
        return written;
    }

    @Override
    public boolean replaceIfEquals(String node, String key, String expected, String value) {
        Objects.requireNonNull(expected, "expected");
        Objects.requireNonNull(value, "value");
        boolean replaced = values.replace(new Slot(node, key), expected, value);
        return replaced;
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
