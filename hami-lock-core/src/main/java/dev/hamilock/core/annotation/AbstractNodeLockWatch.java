package dev.hamilock.core.annotation;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.store.ReleaseFeeder;
import java.io.Closeable;
import java.io.IOException;
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
 * (design decision 3): one thread lists the nodes (pages of 500), then streams {@code GET
 * /api/v1/nodes?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=T} (T: the
 * watch timeout plus up to 10 %); the subclass fetches pages, opens the stream and parses JSON.
 *
 * <ul>
 *   <li>a key's value going from present to absent ⇒ {@link FairReleaseQueue#released}; a {@code
 *       DELETED} node ⇒ {@link FairReleaseQueue#wakeAll}; a {@code BOOKMARK} only advances RV;
 *   <li>an ended stream resumes from the last RV; an {@code ERROR} event or a 410 relists, and a
 *       relist signals what the fresh list shows released, gone, or free with waiters;
 *   <li>queues are reliable, and {@link #observedLockValue} answers, only while a stream is open on
 *       a synced view and no key was added since the last relist.
 * </ul>
 *
 * <p>Failures back off from 100 ms to 5 s (jittered), logged at DEBUG; a {@link LinkageError} stops
 * the watch with one ERROR line (waiters fall back to polling). Thread-safe.
 */
public abstract class AbstractNodeLockWatch implements ReleaseFeeder {

  private static final Logger LOG = LoggerFactory.getLogger(AbstractNodeLockWatch.class);

  /** One node-list page: annotations by node name, {@code resourceVersion}, {@code continue}. */
  public record Page(
      Map<String, Map<String, String>> nodes, String resourceVersion, String continueToken) {}

  /** An open watch stream, read and closed by the watch thread. */
  public interface LineStream extends Closeable {
    /** The next line, {@code null} at the end; throws if the stream failed. */
    String readLine() throws IOException;

    /** Ends the stream from another thread; a client may cancel the request instead of close. */
    default void cancel() throws IOException {
      close();
    }
  }

  // the watched keys and their queues; copy-on-write (read by the watch thread per event)
  private volatile Map<String, FairReleaseQueue> queues = Map.of();
  private volatile boolean keysChanged;
  private volatile boolean connected;
  private final Map<Slot, String> values = new ConcurrentHashMap<>();
  // each node's resourceVersion in its last event since the last listing (a listing has none)
  private final Map<String, String> versions = new ConcurrentHashMap<>();
  private final AtomicLong relists = new AtomicLong();
  private final AtomicLong releases = new AtomicLong();

  private final ThreadFactory threadFactory;
  private final WaitClock time;
  private final Duration watchTimeout;
  private final Object lifecycle = new Object();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final CountDownLatch firstSync = new CountDownLatch(1);
  private Thread thread;
  private volatile boolean closed;
  private volatile LineStream current;
  private String resourceVersion;

  /**
   * A watch on one thread of {@code threadFactory} whose streams last {@code watchTimeout}.
   *
   * @throws IllegalArgumentException if {@code watchTimeout} is under 1 s
   */
  protected AbstractNodeLockWatch(
      ThreadFactory threadFactory, WaitClock time, Duration watchTimeout) {
    this.threadFactory = Objects.requireNonNull(threadFactory, "threadFactory");
    this.time = Objects.requireNonNull(time, "waitClock");
    this.watchTimeout = Objects.requireNonNull(watchTimeout, "watchTimeout");
    checkArgument(
        watchTimeout.toSeconds() >= 1, "watchTimeout must be at least 1s: %s", watchTimeout);
  }

  /** One page of {@code GET /api/v1/nodes?limit=500[&continue=C]} ({@code null}: the first). */
  protected abstract Page listPage(String continueToken) throws Exception;

  /** Opens the watch stream at {@code resourceVersion}; fails as {@link #listPage} unless 2xx. */
  protected abstract LineStream open(String resourceVersion, long timeoutSeconds) throws Exception;

  /** A JSON object parsed into maps, lists, strings and numbers; throws for a non-object. */
  protected abstract Map<?, ?> parseObject(String json) throws Exception;

  /** The page of a {@code v1.NodeList} as {@link #parseObject} gives it. */
  protected static Page page(Map<?, ?> list) {
    Map<String, Map<String, String>> nodes = new HashMap<>();
    if (list.get("items") instanceof List<?> items) {
      for (Object item : items) {
        if (item instanceof Map<?, ?> node && text(field(node, "metadata"), "name") != null) {
          nodes.put(text(field(node, "metadata"), "name"), annotations(node));
        }
      }
    }
    Map<?, ?> meta = field(list, "metadata");
    return new Page(nodes, text(meta, "resourceVersion"), text(meta, "continue"));
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

  private static Map<?, ?> field(Map<?, ?> object, String name) {
    return object.get(name) instanceof Map<?, ?> m ? m : Map.of();
  }

  private static String text(Map<?, ?> object, String name) {
    return object.get(name) instanceof String s ? s : null;
  }

  /** Whether a failure of {@link #listPage} or {@link #open} is a 410 Gone (the watch relists). */
  protected abstract boolean isGone(Exception failure);

  /**
   * {@inheritDoc} A key added to a running watch makes it relist once.
   *
   * @throws IllegalArgumentException if {@code key} is blank
   */
  @Override
  public FairReleaseQueue releaseSignal(String key) {
    requireNonBlank(key, "key");
    Thread running;
    FairReleaseQueue q;
    synchronized (lifecycle) {
      q = queues.get(key);
      if (q != null) {
        return q;
      }
      if (closed) {
        throw new IllegalStateException("node lock watch is closed: cannot add key " + key);
      }
      q = FairReleaseQueue.create(node -> connected && !keysChanged, time);
      Map<String, FairReleaseQueue> next = new TreeMap<>(queues);
      next.put(key, q);
      queues = Collections.unmodifiableMap(next);
      keysChanged = true;
      running = thread;
    }
    if (running != null) {
      endStream(); // the loop relists with the new key
      running.interrupt();
    }
    return q;
  }

  /** The watched lock keys, sorted. */
  public Set<String> keys() {
    return queues.keySet();
  }

  @Override
  public AbstractNodeLockWatch start() {
    synchronized (lifecycle) {
      if (closed) {
        throw new IllegalStateException("node lock watch is closed");
      }
      if (thread == null) {
        thread = threadFactory.newThread(this::run);
        thread.start();
      }
    }
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
    boolean reliable = connected && !keysChanged && node != null && key != null;
    return reliable ? Optional.ofNullable(values.get(new Slot(node, key))) : Optional.empty();
  }

  /** {@inheritDoc} Here: the version of the node's last watch event, none after a relist. */
  @Override
  public Optional<String> observedFreeVersion(String node, String key) {
    if (observedLockValue(node, key).isPresent() || !connected || keysChanged) {
      return Optional.empty();
    }
    return Optional.ofNullable(versions.get(node));
  }

  @Override
  public long relistCount() {
    return relists.get();
  }

  @Override
  public long releaseCount() {
    return releases.get();
  }

  /** Ends the open stream and joins the thread (up to 5 s). Idempotent. */
  @Override
  public void close() {
    Thread t;
    synchronized (lifecycle) {
      closed = true;
      t = thread;
    }
    stop.countDown();
    connected = false;
    endStream();
    if (t != null && t != Thread.currentThread()) {
      t.interrupt();
      try {
        t.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return "%s[keys=%s, connected=%s, relists=%d]"
        .formatted(getClass().getSimpleName(), keys(), connected, relists.get());
  }

  private void run() {
    long backoffMillis = 100;
    while (!closed) {
      Thread.interrupted(); // a key added meanwhile already shows in keysChanged
      try {
        if (resourceVersion == null || keysChanged) {
          relist();
        }
        if (streamOnce()) {
          backoffMillis = 100;
          continue;
        }
      } catch (LinkageError e) { // not transient (e.g. a package not exported on the module path)
        String why = "{} stopped, waiting gang members fall back to polling: the Kubernetes client";
        LOG.error(why + " cannot run here ({})", this, e.toString());
        break;
      } catch (Exception e) { // also the undeclared checked exceptions of Kotlin clients (OkHttp)
        if (closed) {
          break;
        }
        LOG.debug("node lock watch: {}", e.toString());
        if (isGone(e)) {
          resourceVersion = null;
        }
      } finally {
        connected = false;
        current = null;
      }
      long sleep = backoffMillis / 2 + time.randomBelow(backoffMillis / 2 + 1);
      backoffMillis = Math.min(5_000, backoffMillis * 2);
      try {
        stop.await(sleep, TimeUnit.MILLISECONDS); // close() counts it down after setting closed
      } catch (InterruptedException e) { // a key added, or close(): the loop condition decides
      }
    }
    LOG.debug("node lock watch stopped");
  }

  /** One stream from {@link #resourceVersion}; {@code true} if it ended normally. */
  private boolean streamOnce() throws Exception {
    long seconds = watchTimeout.toSeconds();
    try (LineStream in = open(resourceVersion, seconds + time.randomBelow(seconds / 10 + 1))) {
      current = in;
      if (closed) {
        return false;
      }
      connected = true;
      firstSync.countDown();
      String line;
      while (!closed && !keysChanged && (line = in.readLine()) != null) {
        if (!line.isBlank() && !handle(line)) {
          return false;
        }
      }
      return true;
    }
  }

  private void endStream() {
    LineStream in = current;
    if (in != null) {
      try {
        in.cancel();
      } catch (IOException e) {
        LOG.debug("closing the watch stream: {}", e.toString());
      }
    }
  }

  /** {@code false} if the stream must be restarted with a relist. */
  private boolean handle(String line) {
    Map<?, ?> event = null;
    try {
      event = parseObject(line);
    } catch (Exception e) { // undecodable
    }
    if (event == null) {
      LOG.debug("node lock watch: ignoring undecodable line {}", line);
      return true;
    }
    String type = Objects.requireNonNullElse(text(event, "type"), "");
    if (type.equals("ERROR")) {
      LOG.debug("node lock watch: ERROR event {}: relisting", line);
      resourceVersion = null;
      return false;
    }
    Map<?, ?> node = field(event, "object");
    String version = text(field(node, "metadata"), "resourceVersion");
    String name = text(field(node, "metadata"), "name");
    resourceVersion = version != null ? version : resourceVersion;
    if (!type.equals("BOOKMARK") && name != null) {
      event(type.equals("DELETED"), version, name, annotations(node));
    }
    return true;
  }

  /** Lists the nodes and signals what it shows released; a failed list leaves keysChanged set. */
  private void relist() throws Exception {
    keysChanged = false; // a key added from here on triggers another relist
    Map<String, FairReleaseQueue> watched = queues;
    Map<String, Map<String, String>> nodes = new HashMap<>();
    String listVersion = null;
    try {
      String cont = null;
      do {
        Page page = listPage(cont);
        listVersion = listVersion == null ? page.resourceVersion() : listVersion;
        nodes.putAll(page.nodes());
        cont = page.continueToken();
      } while (cont != null && !cont.isEmpty() && !closed);
      if (listVersion == null) {
        throw new IOException("node list carries no metadata.resourceVersion");
      }
    } catch (Exception | Error e) {
      keysChanged = true;
      throw e;
    }
    resourceVersion = listVersion;
    versions.clear();
    Map<Slot, String> fresh = new HashMap<>();
    nodes.forEach(
        (n, a) -> watched.keySet().forEach(k -> putIfSet(fresh, new Slot(n, k), a.get(k))));
    relists.incrementAndGet();
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

  /**
   * One ADDED/MODIFIED/DELETED event of a node; values and version are updated before any waiter is
   * woken, so it sees the version at which the lock was released.
   */
  private void event(
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
