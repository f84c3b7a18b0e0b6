package dev.hamilock.core.annotation;

import static dev.hamilock.core.internal.Checks.requireNonBlank;
import static dev.hamilock.core.watch.ListAndWatch.field;
import static dev.hamilock.core.watch.ListAndWatch.text;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.core.watch.ListAndWatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shared watch of all Nodes per client feeding one {@link FairReleaseQueue} per lock key
 * (design decision 3): a {@link ListAndWatch} of {@code /api/v1/nodes} whose sink this is; the
 * subclass supplies the client's {@link ListAndWatch.Transport}.
 *
 * <ul>
 *   <li>a key's value going from present to absent ⇒ {@link FairReleaseQueue#released}; a {@code
 *       DELETED} node ⇒ {@link FairReleaseQueue#wakeAll};
 *   <li>an ended stream resumes from the last RV; an {@code ERROR} event or a 410 relists, and a
 *       relist signals what the fresh list shows released, gone, or free with waiters;
 *   <li>queues are reliable, and {@link #observedLockValue} answers, only while a stream is open on
 *       a listing that began after the last key was added.
 * </ul>
 *
 * <p>Failures back off from 100 ms to 5 s (jittered), logged at DEBUG; a {@link LinkageError} stops
 * the watch with one ERROR line (waiters fall back to polling). Thread-safe.
 */
public abstract class AbstractNodeLockWatch implements ReleaseFeeder {

  private static final Logger LOG = LoggerFactory.getLogger(AbstractNodeLockWatch.class);

  // the watched keys and their queues; copy-on-write (read by the watch thread per event)
  private volatile Map<String, FairReleaseQueue> queues = Map.of();
  private final AtomicLong keysAdded = new AtomicLong();
  private volatile long keysListed = -1; // keysAdded when the last completed listing began
  private volatile boolean connected;
  private final Map<Slot, String> values = new ConcurrentHashMap<>();
  // each node's resourceVersion in its last event since the last listing (a listing has none)
  private final Map<String, String> versions = new ConcurrentHashMap<>();
  private final AtomicLong releases = new AtomicLong();

  private final WaitClock time;
  private final ListAndWatch loop;
  private final Object lifecycle = new Object();
  private final CountDownLatch firstSync = new CountDownLatch(1);
  private volatile boolean closed;

  /**
   * A watch over {@code transport} on one thread of {@code threadFactory} whose streams last {@code
   * watchTimeout}.
   *
   * @throws IllegalArgumentException if {@code watchTimeout} is under 1 s
   * @throws NullPointerException if an argument is null
   */
  protected AbstractNodeLockWatch(
      ListAndWatch.Transport transport,
      ThreadFactory threadFactory,
      WaitClock time,
      Duration watchTimeout) {
    this.time = Objects.requireNonNull(time, "waitClock");
    this.loop =
        new ListAndWatch(
            "node lock watch",
            "/api/v1/nodes",
            transport,
            new NodeSink(),
            threadFactory,
            time,
            watchTimeout);
  }

  private boolean reliable() {
    return connected && keysListed == keysAdded.get();
  }

  /**
   * {@inheritDoc} A key added to a running watch makes it relist once.
   *
   * @throws IllegalArgumentException if {@code key} is blank
   */
  @Override
  public FairReleaseQueue releaseSignal(String key) {
    requireNonBlank(key, "key");
    FairReleaseQueue q;
    synchronized (lifecycle) {
      q = queues.get(key);
      if (q != null) {
        return q;
      }
      if (closed) {
        throw new IllegalStateException("node lock watch is closed: cannot add key " + key);
      }
      q = FairReleaseQueue.create(node -> reliable(), time);
      Map<String, FairReleaseQueue> next = new TreeMap<>(queues);
      next.put(key, q);
      queues = Collections.unmodifiableMap(next);
      keysAdded.incrementAndGet();
    }
    loop.relist(); // with the new key
    return q;
  }

  /** The watched lock keys, sorted. */
  public Set<String> keys() {
    return queues.keySet();
  }

  @Override
  public AbstractNodeLockWatch start() {
    loop.start();
    return this;
  }

  @Override
  public boolean awaitSynced(Duration timeout) throws InterruptedException {
    return firstSync.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  @Override
  public boolean isConnected() {
    return connected;
  }

  @Override
  public Optional<String> observedLockValue(String node, String key) {
    boolean reliable = reliable() && node != null && key != null;
    return reliable ? Optional.ofNullable(values.get(new Slot(node, key))) : Optional.empty();
  }

  /** {@inheritDoc} Here: the version of the node's last watch event, none after a relist. */
  @Override
  public Optional<String> observedFreeVersion(String node, String key) {
    if (observedLockValue(node, key).isPresent() || !reliable()) {
      return Optional.empty();
    }
    return Optional.ofNullable(versions.get(node));
  }

  @Override
  public long relistCount() {
    return loop.relistCount();
  }

  @Override
  public long releaseCount() {
    return releases.get();
  }

  /** Ends the open stream and joins the thread (up to 5 s). Idempotent. */
  @Override
  public void close() {
    synchronized (lifecycle) {
      closed = true;
    }
    connected = false;
    loop.close();
  }

  @Override
  public String toString() {
    return "%s[keys=%s, connected=%s, relists=%d]"
        .formatted(getClass().getSimpleName(), keys(), connected, loop.relistCount());
  }

  /** The string annotations of a parsed node object, empty if none. */
  private static Map<String, String> annotations(Map<?, ?> node) {
    Map<String, String> out = new HashMap<>();
    if (field(node, "metadata").get("annotations") instanceof Map<?, ?> a) {
      a.forEach((k, v) -> putIfSet(out, String.valueOf(k), v instanceof String s ? s : null));
    }
    return out;
  }

  private static <K> void putIfSet(Map<K, String> values, K key, String value) {
    if (value != null) {
      values.put(key, value);
    }
  }

  /** The loop's sink, on the watch thread. */
  private final class NodeSink implements ListAndWatch.Sink {
    private Map<String, FairReleaseQueue> watched = Map.of();
    private long keysAtListing;

    @Override
    public void listing() {
      keysAtListing = keysAdded.get(); // read before the queues: a key added now lists again
      watched = queues;
    }

    @Override
    public void streaming() {
      connected = true;
      firstSync.countDown();
    }

    @Override
    public void ended() {
      connected = false;
    }

    @Override
    public boolean event(String type, Map<?, ?> node) {
      String name = text(field(node, "metadata"), "name");
      if (!type.equals("BOOKMARK") && name != null) {
        String version = text(field(node, "metadata"), "resourceVersion");
        nodeEvent(type.equals("DELETED"), version, name, annotations(node));
      }
      return true;
    }

    /** Signals what the listing shows released, gone, or free with waiters. */
    @Override
    public void listed(String listVersion, List<Map<?, ?>> items) {
      Map<String, Map<String, String>> nodes = new HashMap<>();
      for (Map<?, ?> item : items) {
        String name = text(field(item, "metadata"), "name");
        if (name != null) {
          nodes.put(name, annotations(item));
        }
      }
      versions.clear();
      Map<Slot, String> fresh = new HashMap<>();
      nodes.forEach(
          (n, a) -> watched.keySet().forEach(k -> putIfSet(fresh, new Slot(n, k), a.get(k))));
      Set<Slot> before = Set.copyOf(values.keySet()); // each one released or its node woken below
      Set<String> deleted = new HashSet<>();
      for (Slot slot : before) {
        FairReleaseQueue queue = watched.get(slot.key());
        if (queue == null) {
          continue;
        }
        if (!nodes.containsKey(slot.node())) {
          if (deleted.add(slot.node())) {
            watched.values().forEach(q -> q.wakeAll(slot.node()));
          }
        } else if (!fresh.containsKey(slot)) {
          releases.incrementAndGet();
          queue.released(slot.node());
        }
      }
      values.keySet().retainAll(fresh.keySet());
      values.putAll(fresh);
      keysListed = keysAtListing;
      // a waiter may have seen a lock that came and went while the watch was down: no diff
      // shows it, so hand a wake-up to the first waiter of every node that is free now
      for (Map.Entry<String, FairReleaseQueue> e : watched.entrySet()) {
        for (String node : e.getValue().nodesWithWaiters()) {
          Slot slot = new Slot(node, e.getKey());
          if (nodes.containsKey(node) && !fresh.containsKey(slot) && !before.contains(slot)) {
            e.getValue().released(node);
          }
        }
      }
      String listed = "node lock watch: listed {} nodes at resourceVersion {} ({} locks of {})";
      LOG.debug(listed, nodes.size(), listVersion, fresh.size(), watched.keySet());
    }
  }

  /**
   * One ADDED/MODIFIED/DELETED event of a node; values and version are updated before any waiter is
   * woken, so it sees the version at which the lock was released.
   */
  private void nodeEvent(
      boolean deleted, String version, String node, Map<String, String> annotations) {
    List<Runnable> wake = new ArrayList<>();
    versions.remove(node); // none while the event's values are applied
    for (Map.Entry<String, FairReleaseQueue> e : queues.entrySet()) {
      String key = e.getKey();
      FairReleaseQueue queue = e.getValue();
      Slot slot = new Slot(node, key);
      if (deleted) {
        values.remove(slot);
        wake.add(() -> queue.wakeAll(node));
        continue;
      }
      String value = annotations.get(key);
      String old = value != null ? values.put(slot, value) : values.remove(slot);
      if (old != null && value == null) {
        releases.incrementAndGet();
        LOG.debug("node lock watch: node {} lock {}=\"{}\" released", node, key, old);
        wake.add(() -> queue.released(node));
      }
    }
    if (version != null && !deleted) {
      versions.put(node, version);
    }
    wake.forEach(Runnable::run);
  }

  /** A lock annotation of one node. */
  private record Slot(String node, String key) {}
}
