package dev.hamilock.core.annotation;

import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.FairReleaseQueue;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release detection of a node watch, the same for every Kubernetes client (design decision 3):
 * the lock values of every watched key as last seen, the {@link FairReleaseQueue} of each key, and
 * what each watch event or relist means for them. A client's watch only lists, streams and calls
 * {@link #relist} / {@link #event}:
 *
 * <ul>
 *   <li>an {@code ADDED}/{@code MODIFIED} node whose value of a key goes from present to absent ⇒
 *       that key's {@link FairReleaseQueue#released}; a {@code DELETED} node ⇒ {@link
 *       FairReleaseQueue#wakeAll} on every key's queue;
 *   <li>a relist diffs the fresh list against the values seen: a value gone ⇒ released, a node gone
 *       ⇒ woken; then every node with waiters that is not locked in the fresh list is signalled as
 *       released (its lock may have come and gone while the watch was down);
 *   <li>a queue is reliable ({@link FairReleaseQueue#isReliable(String)}) while the client reports
 *       a stream open on a synced view ({@link #connected(boolean)}) and no key was added since the
 *       last relist; only then does {@link #observedLockValue} answer.
 * </ul>
 *
 * <p>Thread-safe: events and relists come from one watch thread; keys may be added from any.
 */
public final class NodeLockReleases {

  private static final Logger LOG = LoggerFactory.getLogger(NodeLockReleases.class);

  /** Lists the nodes: the annotations of every node by name (only lock keys are read). */
  @FunctionalInterface
  public interface Lister<E extends Exception> {
    /**
     * @return every node's annotations by node name (an empty map for a node without any)
     * @throws E if the list failed
     */
    Map<String, Map<String, String>> list() throws E;
  }

  /** The watched keys and their queues; copy-on-write (read by the watch thread per event). */
  private volatile Map<String, FairReleaseQueue> queues = Map.of();

  private volatile boolean keysChanged;
  private volatile boolean connected;
  private final Map<Slot, String> values = new ConcurrentHashMap<>();
  private final AtomicLong relists = new AtomicLong();
  private final AtomicLong releases = new AtomicLong();

  /**
   * The wake-up queue of {@code key}, created on first use; a new key marks the view stale until
   * the next relist ({@link #keysChanged()}).
   *
   * @param key the lock annotation, e.g. {@code hami.io/mutex.lock}; non-blank
   * @return the key's queue (the same instance for the same key)
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is blank
   */
  public synchronized FairReleaseQueue queue(String key) {
    requireNonBlank(key, "key");
    FairReleaseQueue existing = queues.get(key);
    if (existing != null) {
      return existing;
    }
    FairReleaseQueue q = FairReleaseQueue.create(node -> connected && !keysChanged);
    Map<String, FairReleaseQueue> next = new TreeMap<>(queues);
    next.put(key, q);
    queues = Collections.unmodifiableMap(next);
    keysChanged = true;
    return q;
  }

  /**
   * @return the watched lock keys, sorted
   */
  public Set<String> keys() {
    return queues.keySet();
  }

  /**
   * @return whether a key was added since the last successful relist (the watch must relist)
   */
  public boolean keysChanged() {
    return keysChanged;
  }

  /**
   * @param open whether the client's stream is open on a synced view right now
   */
  public void connected(boolean open) {
    connected = open;
  }

  /**
   * @return what {@link #connected(boolean)} last set
   */
  public boolean isConnected() {
    return connected;
  }

  /**
   * The lock value last seen for {@code node}, offered only while reliable (see the class
   * description); it may lag the server by the event delivery time.
   *
   * @param node the node name
   * @param key the lock key
   * @return the watched value; empty if unlocked, unknown, not watched or not reliable now
   */
  public Optional<String> observedLockValue(String node, String key) {
    if (!connected || keysChanged || node == null || key == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(values.get(new Slot(node, key)));
  }

  /**
   * @return how many relists succeeded, including the first
   */
  public long relistCount() {
    return relists.get();
  }

  /**
   * @return how many releases (value present → absent) were signalled
   */
  public long releaseCount() {
    return releases.get();
  }

  /**
   * Lists the nodes and signals what the list shows released. A failed list leaves {@link
   * #keysChanged()} set, so the watch lists again instead of resuming a stream that knows none of a
   * new key's values.
   *
   * @param lister the client's (paged) list
   * @param <E> the list's failure
   * @throws E if the list failed (nothing is signalled)
   */
  public <E extends Exception> void relist(Lister<E> lister) throws E {
    keysChanged = false; // a key added from here on triggers another relist
    Map<String, FairReleaseQueue> watched = queues;
    Map<String, Map<String, String>> nodes;
    try {
      nodes = lister.list();
    } catch (Exception | Error e) {
      keysChanged = true;
      throw e;
    }
    Map<Slot, String> fresh = new HashMap<>();
    nodes.forEach(
        (node, annotations) -> {
          for (String key : watched.keySet()) {
            String v = annotations.get(key);
            if (v != null) {
              fresh.put(new Slot(node, key), v);
            }
          }
        });
    relists.incrementAndGet();
    Set<Slot> signalled = new HashSet<>();
    Set<String> deleted = new HashSet<>();
    for (Map.Entry<Slot, String> old : values.entrySet()) {
      Slot slot = old.getKey();
      FairReleaseQueue queue = watched.get(slot.key());
      if (queue == null) {
        continue;
      }
      if (!nodes.containsKey(slot.node())) {
        if (deleted.add(slot.node())) {
          watched.values().forEach(q -> q.wakeAll(slot.node()));
        }
        signalled.add(slot);
      } else if (!fresh.containsKey(slot)) {
        releases.incrementAndGet();
        queue.released(slot.node());
        signalled.add(slot);
      }
    }
    values.keySet().retainAll(fresh.keySet());
    values.putAll(fresh);
    // a waiter may have seen a lock that came and went while the watch was down: no diff
    // shows it, so hand a wake-up to the first waiter of every node that is free now
    for (Map.Entry<String, FairReleaseQueue> e : watched.entrySet()) {
      for (String node : e.getValue().nodesWithWaiters()) {
        Slot slot = new Slot(node, e.getKey());
        if (nodes.containsKey(node) && !fresh.containsKey(slot) && !signalled.contains(slot)) {
          e.getValue().released(node);
        }
      }
    }
    LOG.debug(
        "node lock watch: listed {} nodes ({} locks of {})",
        nodes.size(),
        fresh.size(),
        watched.keySet());
  }

  /**
   * One watch event of a node.
   *
   * @param deleted whether the event is {@code DELETED}; else {@code ADDED} or {@code MODIFIED}
   * @param node the node's name
   * @param annotations the node's annotations in the event (empty if none)
   */
  public void event(boolean deleted, String node, Map<String, String> annotations) {
    Map<String, FairReleaseQueue> watched = queues;
    for (Map.Entry<String, FairReleaseQueue> e : watched.entrySet()) {
      String key = e.getKey();
      Slot slot = new Slot(node, key);
      if (deleted) {
        values.remove(slot);
        e.getValue().wakeAll(node);
        continue;
      }
      String value = annotations.get(key);
      String old = value != null ? values.put(slot, value) : values.remove(slot);
      if (old != null && value == null) {
        releases.incrementAndGet();
        LOG.debug("node lock watch: node {} lock {}=\"{}\" released", node, key, old);
        e.getValue().released(node);
      }
    }
  }

  /** A lock annotation of one node. */
  private record Slot(String node, String key) {}
}
