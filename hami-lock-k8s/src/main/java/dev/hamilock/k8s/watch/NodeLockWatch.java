package dev.hamilock.k8s.watch;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.annotation.NodeLockReleases;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.k8s.internal.ApiFailures;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.BufferedSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shared watch of all Nodes per client — not one per waiter, and not one per lock key: every
 * lock key of the stack is served by the same stream (issue 16 item 8) — that tells core's {@link
 * FairReleaseQueue} of each key when a node's lock annotation of that key disappears (design
 * decision 3), so a waiting gang member retries at once instead of at its next poll. The watch only
 * feeds the queues: the wake-up policy (one waiter per release, oldest first) is core's, the same
 * for in-memory runs, the gang demo and production.
 *
 * <p>Protocol: {@code LIST /api/v1/nodes} (pages of 500) to learn the current lock values and a
 * resourceVersion, then {@code WATCH
 * /api/v1/nodes?watch=true&resourceVersion=RV&allowWatchBookmarks=true} on a client without read
 * timeout; {@code ADDED}/{@code MODIFIED}/{@code BOOKMARK} advance RV, a value of a key going from
 * present to absent calls that key's {@link FairReleaseQueue#released}, a {@code DELETED} node
 * calls {@link FairReleaseQueue#wakeAll} on every key's queue. A dropped watch resumes from the
 * last RV; an {@code ERROR} event or a 410 Gone/Expired answer starts over with a LIST, and the
 * differences found by the relist are signalled too. Failures back off from 100 ms to 5 s
 * (jittered) and are logged at DEBUG/INFO. Waiters never depend on the watch: the acquire loop's
 * poll is the fallback whenever the watch is down or late. Events are parsed schema-free (unknown
 * fields are ignored).
 *
 * <p><b>Reliable mode.</b> While a stream is open on a synced view the watch marks its signal
 * reliable (the queues' {@link FairReleaseQueue#isReliable(String)}): a stream resumed from a
 * resourceVersion replays every event since, and one that cannot be resumed (410) relists and
 * signals the differences, so no release is missed and waiters may wait for the wake-up (up to
 * {@code RetryPolicy.watchedPollInterval()}, 1 s) instead of polling every 100 ms. The flag is
 * cleared as soon as the stream ends or fails, and by {@link #close()}. After a relist, every node
 * that has waiters and is not locked in the fresh list is signalled as released (its lock may have
 * come and gone while the watch was down). In the same mode {@link #observedLockValue(String,
 * String)} offers the watched value, so a contended attempt can skip the GET that would otherwise
 * tell who holds the lock.
 *
 * <p><b>Keys.</b> {@link #releaseSignal(String)} adds a key and returns its queue; call it for
 * every key before {@link #start()}. A key added to a running watch makes it relist once (its
 * values are unknown until then; its queue is not reliable meanwhile).
 *
 * <p>One daemon thread (from the configured {@link ThreadFactory}) runs the loop between {@link
 * #start()} and {@link #close()}; {@link #close()} cancels the open call and joins the thread, so
 * nothing leaks.
 */
public final class NodeLockWatch implements ReleaseFeeder {

  private static final Logger LOG = LoggerFactory.getLogger(NodeLockWatch.class);
  private static final AtomicInteger THREADS = new AtomicInteger();

  private final KubeHttp http;

  /** The release detection (core's, shared with every client's watch). */
  private final NodeLockReleases releases = new NodeLockReleases();

  private final Duration watchTimeout;
  private final ThreadFactory threadFactory;
  private final WaitClock time;

  private final Object lifecycle = new Object();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final CountDownLatch firstSync = new CountDownLatch(1);
  private Thread thread;
  private volatile boolean closed;
  private volatile Call current;

  private String resourceVersion;

  private NodeLockWatch(Builder b) {
    this.http = new KubeHttp(b.apiClient, b.watchApiClient, b.requestTimeout);
    this.watchTimeout = b.watchTimeout;
    this.threadFactory = b.threadFactory;
    this.time = b.time;
  }

  /**
   * @param apiClient the client for LIST (its credentials are reused for the watch)
   * @return a builder (request timeout 10 s, server-side watch timeout 5 min, daemon thread {@code
   *     hami-lock-node-watch-N}); keys are added with {@link #releaseSignal(String)}
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * The wake-up queue of lock key {@code key}, fed by this watch: one per key, shared by every lock
   * stack of that key on this watch. Adding a key to a running watch makes it relist once.
   *
   * @param key the lock annotation, e.g. {@code hami.io/mutex.lock}; non-blank
   * @return the key's queue (the same instance for the same key); reliable while this watch's
   *     stream is open on a synced view that includes the key
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is blank
   * @throws IllegalStateException if the watch is closed and {@code key} is new to it
   */
  public FairReleaseQueue releaseSignal(String key) {
    requireNonBlank(key, "key");
    Call toCancel;
    FairReleaseQueue q;
    synchronized (lifecycle) {
      if (closed && !releases.keys().contains(key)) {
        throw new IllegalStateException("node lock watch is closed: cannot add key " + key);
      }
      boolean added = !releases.keys().contains(key);
      q = releases.queue(key);
      toCancel = added && thread != null ? current : null;
    }
    if (toCancel != null) {
      toCancel.cancel(); // the stream ends; the loop relists with the new key
    }
    return q;
  }

  /**
   * @return the watched lock keys, sorted
   */
  public Set<String> keys() {
    return releases.keys();
  }

  /**
   * Starts the watch thread; idempotent.
   *
   * @return this watch
   * @throws IllegalStateException if already closed
   */
  public NodeLockWatch start() {
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

  /**
   * @return whether a watch stream is open right now
   */
  public boolean isConnected() {
    return releases.isConnected();
  }

  /**
   * Waits until the first LIST has been applied and the watch stream is open.
   *
   * @param timeout the longest wait
   * @return {@code true} if synced, {@code false} on timeout
   * @throws InterruptedException if interrupted
   */
  public boolean awaitSynced(Duration timeout) throws InterruptedException {
    return firstSync.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * The lock value this watch currently shows for {@code node}, offered only while the watch is
   * reliable (stream open on a synced view). It may lag the server by the event delivery time, so
   * callers must use it only where a stale value is safe: as the expected value of a
   * compare-and-set, or to decide to wait (a release is then still signalled).
   *
   * @param node the node name
   * @param key the lock key
   * @return the watched value of the lock annotation; empty if the node is not locked in the
   *     watched view, unknown, the key is not watched, or the watch is not reliable right now
   */
  public Optional<String> observedLockValue(String node, String key) {
    return releases.observedLockValue(node, key);
  }

  /**
   * @return how many times the node list was (re)loaded, including the first
   */
  public long relistCount() {
    return releases.relistCount();
  }

  /**
   * @return how many lock releases (value present → absent) this watch has signalled
   */
  public long releaseCount() {
    return releases.releaseCount();
  }

  /** Stops the watch: cancels the open request and joins the thread (up to 5 s). Idempotent. */
  @Override
  public void close() {
    Thread t;
    synchronized (lifecycle) {
      closed = true;
      t = thread;
    }
    stop.countDown();
    releases.connected(false);
    Call c = current;
    if (c != null) {
      c.cancel();
    }
    if (t != null && t != Thread.currentThread()) {
      t.interrupt();
      try {
        t.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    releases.connected(false);
  }

  @Override
  public String toString() {
    return "NodeLockWatch[keys="
        + releases.keys()
        + ", connected="
        + releases.isConnected()
        + ", relists="
        + releases.relistCount()
        + "]";
  }

  // ---------------------------------------------------------------------------------------

  private void run() {
    long backoffMillis = 100;
    while (!closed) {
      try {
        if (resourceVersion == null || releases.keysChanged()) {
          releases.relist(this::listNodes);
        }
        boolean healthy = watchOnce();
        if (healthy) {
          backoffMillis = 100;
          continue;
        }
      } catch (ApiException e) {
        if (closed) {
          break;
        }
        LOG.debug("node lock watch: {}", ApiFailures.describe(e));
        if (e.getCode() == 410) {
          resourceVersion = null;
        }
      } catch (IOException | RuntimeException e) {
        if (closed) {
          break;
        }
        LOG.debug("node lock watch interrupted: {}", e.toString());
      } catch (Exception e) {
        // a checked exception no Java signature declares: OkHttp (Kotlin) throws the
        // InterruptedException of an interrupted connect as it is, e.g. when close() interrupts
        // this thread mid-connect; uncaught, it killed the thread with a bare stack trace
        if (closed) {
          break;
        }
        LOG.debug("node lock watch: {}", e.toString());
      } catch (LinkageError e) {
        // not transient: the Kubernetes client cannot run in this JVM set-up (e.g. an OkHttp
        // internal package a client-java call needs is not exported on the module path).
        // Say so once and stop instead of dying with a bare stack trace; waiters poll.
        LOG.error(
            "node lock watch for {} stopped, waiting gang members fall back to polling: the Kubernetes"
                + " client cannot run here ({}); on the module path a client-java call may need e.g."
                + " --add-exports okhttp3/okhttp3.internal.http=io.kubernetes.client.java.api",
            releases.keys(),
            e.toString());
        break;
      } finally {
        releases.connected(false);
        current = null;
      }
      long sleep = backoffMillis / 2 + time.randomBelow(backoffMillis / 2 + 1);
      backoffMillis = Math.min(5_000, backoffMillis * 2);
      try {
        if (stop.await(sleep, TimeUnit.MILLISECONDS)) {
          break;
        }
      } catch (InterruptedException e) {
        if (closed) {
          break;
        }
      }
    }
    LOG.debug("node lock watch stopped");
  }

  /** LIST all nodes (pages of 500): their annotations by name; sets the resume point. */
  private Map<String, Map<String, String>> listNodes() throws ApiException {
    Map<String, Map<String, String>> nodes = new HashMap<>();
    String cont = null;
    String listVersion = null;
    do {
      List<Pair> q = new ArrayList<>();
      q.add(new Pair("limit", "500"));
      if (cont != null) {
        q.add(new Pair("continue", cont));
      }
      JsonObject page = http.get("/api/v1/nodes", q);
      JsonObject meta = obj(page, "metadata").orElseGet(JsonObject::new);
      if (listVersion == null) {
        listVersion = str(meta, "resourceVersion").orElse(null);
      }
      cont = str(meta, "continue").filter(s -> !s.isEmpty()).orElse(null);
      JsonElement items = page.get("items");
      if (items != null && items.isJsonArray()) {
        for (JsonElement item : items.getAsJsonArray()) {
          if (item.isJsonObject()) {
            JsonObject o = item.getAsJsonObject();
            obj(o, "metadata")
                .flatMap(m -> str(m, "name"))
                .ifPresent(name -> nodes.put(name, annotations(o)));
          }
        }
      }
    } while (cont != null && !closed);
    if (listVersion == null) {
      throw new ApiException(0, "node list carries no metadata.resourceVersion");
    }
    resourceVersion = listVersion;
    LOG.debug("node lock watch: listed at resourceVersion {}", listVersion);
    return nodes;
  }

  /**
   * One watch stream from {@link #resourceVersion} until it ends.
   *
   * @return {@code true} if it ended normally (resume at once), {@code false} after an error
   */
  private boolean watchOnce() throws ApiException, IOException {
    List<Pair> q = new ArrayList<>();
    q.add(new Pair("watch", "true"));
    q.add(new Pair("resourceVersion", resourceVersion));
    q.add(new Pair("allowWatchBookmarks", "true"));
    long seconds = watchTimeout.toSeconds();
    q.add(new Pair("timeoutSeconds", Long.toString(seconds + time.randomBelow(seconds / 10 + 1))));
    Call call = http.watchCall("/api/v1/nodes", q);
    current = call;
    if (closed) {
      return false;
    }
    try (Response response = call.execute()) {
      if (!response.isSuccessful()) {
        ResponseBody body = response.body();
        throw new ApiException(
            response.code(), response.headers().toMultimap(), body == null ? "" : body.string());
      }
      ResponseBody body = response.body();
      if (body == null) {
        return false;
      }
      releases.connected(true);
      firstSync.countDown();
      BufferedSource source = body.source();
      String line;
      while (!closed && !releases.keysChanged() && (line = source.readUtf8Line()) != null) {
        if (line.isBlank()) {
          continue;
        }
        if (!handle(line)) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * @return {@code false} if the stream must be restarted with a relist
   */
  private boolean handle(String line) {
    Optional<JsonObject> event = KubeHttp.parseObject(line);
    if (event.isEmpty()) {
      LOG.debug("node lock watch: ignoring undecodable line {}", line);
      return true;
    }
    String type = str(event.get(), "type").orElse("");
    Optional<JsonObject> object = obj(event.get(), "object");
    if (type.equals("ERROR")) {
      int code = object.flatMap(o -> str(o, "code")).map(NodeLockWatch::parseInt).orElse(0);
      LOG.debug("node lock watch: ERROR event (code {}): relisting", code);
      resourceVersion = null;
      return false;
    }
    if (object.isEmpty()) {
      return true;
    }
    Optional<JsonObject> meta = obj(object.get(), "metadata");
    meta.flatMap(m -> str(m, "resourceVersion")).ifPresent(rv -> resourceVersion = rv);
    if (type.equals("BOOKMARK")) {
      return true;
    }
    Optional<String> name = meta.flatMap(m -> str(m, "name"));
    if (name.isEmpty()) {
      return true;
    }
    releases.event(type.equals("DELETED"), name.get(), annotations(object.get()));
    return true;
  }

  /** The string annotations of a node, empty if none. */
  private static Map<String, String> annotations(JsonObject node) {
    Map<String, String> out = new HashMap<>();
    obj(node, "metadata")
        .flatMap(m -> obj(m, "annotations"))
        .ifPresent(
            a ->
                a.entrySet()
                    .forEach(
                        e -> {
                          if (e.getValue().isJsonPrimitive()) {
                            out.put(e.getKey(), e.getValue().getAsString());
                          }
                        }));
    return out;
  }

  private static int parseInt(String s) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static Optional<JsonObject> obj(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonObject() ? Optional.of(e.getAsJsonObject()) : Optional.empty();
  }

  private static Optional<String> str(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonPrimitive() ? Optional.of(e.getAsString()) : Optional.empty();
  }

  /** Builder for {@link NodeLockWatch}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final ApiClient apiClient;
    private ApiClient watchApiClient;
    private Duration requestTimeout = Duration.ofSeconds(10);
    private WaitClock time = WaitClock.SYSTEM;
    private Duration watchTimeout = Duration.ofMinutes(5);
    private ThreadFactory threadFactory =
        r -> {
          Thread t = new Thread(r, "hami-lock-node-watch-" + THREADS.incrementAndGet());
          t.setDaemon(true);
          return t;
        };

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    /**
     * @param watchApiClient client whose HTTP settings the watch uses (its read timeout is replaced
     *     by none); default: derived from the main client
     * @return this builder
     */
    public Builder watchApiClient(ApiClient watchApiClient) {
      this.watchApiClient = watchApiClient;
      return this;
    }

    /**
     * @param requestTimeout whole-call timeout of each LIST page (default 10 s); positive
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * @param watchTimeout server-side {@code timeoutSeconds} of one watch stream, plus up to 10 %
     *     jitter (default 5 min); at least 1 s
     * @return this builder
     */
    public Builder watchTimeout(Duration watchTimeout) {
      this.watchTimeout = watchTimeout;
      return this;
    }

    /**
     * @param threadFactory makes the one watch thread (default: daemon threads)
     * @return this builder
     */
    public Builder threadFactory(ThreadFactory threadFactory) {
      this.threadFactory = threadFactory;
      return this;
    }

    /**
     * @param time the random source of the reconnect back-off's jitter (half to all of 100 ms
     *     doubling to 5 s) and of the watch request's {@code timeoutSeconds} spread (up to +10 %),
     *     the same seam as the acquire loop's (default {@link WaitClock#SYSTEM})
     * @return this builder
     */
    public Builder waitClock(WaitClock time) {
      this.time = time;
      return this;
    }

    /**
     * @return the watch, not started
     * @throws IllegalArgumentException naming the setting if a timeout is invalid or the thread
     *     factory is null
     */
    public NodeLockWatch build() {
      Validation.positive("requestTimeout", requestTimeout);
      Validation.positive("watchTimeout", watchTimeout);
      checkArgument(
          watchTimeout.toSeconds() >= 1, "watchTimeout must be at least 1s: %s", watchTimeout);
      Objects.requireNonNull(threadFactory, "threadFactory");
      Objects.requireNonNull(time, "waitClock");
      return new NodeLockWatch(this);
    }
  }
}
