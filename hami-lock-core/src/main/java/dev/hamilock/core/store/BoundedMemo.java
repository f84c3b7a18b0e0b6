package dev.hamilock.core.store;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/** A small thread-safe LRU map with a fixed capacity (least recently used entries are dropped). */
final class BoundedMemo<K, V> {

  private final Map<K, V> map;

  BoundedMemo(int capacity) {
    this.map =
        new LinkedHashMap<>(16, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
            return size() > capacity;
          }
        };
  }

  synchronized V get(K key) {
    return map.get(key);
  }

  synchronized V computeIfAbsent(K key, Function<K, V> fn) {
    return map.computeIfAbsent(key, fn);
  }

  /** {@return the previous value, or {@code null} if {@code value} was stored} */
  synchronized V putIfAbsent(K key, V value) {
    return map.putIfAbsent(key, value);
  }

  synchronized void put(K key, V value) {
    map.put(key, value);
  }

  synchronized void remove(K key) {
    map.remove(key);
  }

  synchronized void remove(K key, V value) {
    map.remove(key, value);
  }
}
