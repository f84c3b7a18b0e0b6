package dev.hamilock.core.watch;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.WaitClock;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One resource's list and watch on one thread, each listing and event handed to a {@link Sink} in
 * the watch's own order (client-go's {@code Reflector.ListAndWatch}, {@code
 * k8s.io/client-go/tools/cache/reflector.go}, without the informer's {@code DeltaFIFO}, which hands
 * a key's queued changes over at once, out of the watch's order): the thread lists {@code PATH} in
 * pages of 500, then streams {@code GET
 * PATH?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=T} (T: the watch
 * timeout plus up to 10 %).
 *
 * <ul>
 *   <li>every event's {@code metadata.resourceVersion} (a {@code BOOKMARK}'s too) becomes RV; an
 *       ended stream resumes from RV, so the sink sees no event twice except a server's replay;
 *   <li>an {@code ERROR} event, a 410 Gone, a sink refusing an event, or {@link #relist()} lists
 *       again, and the sink gets the new listing whole;
 *   <li>failures back off from 100 ms to 5 s (jittered), logged at DEBUG; a {@link LinkageError}
 *       stops the thread with one ERROR line.
 * </ul>
 *
 * Thread-safe; the sink is called on the watch thread only.
 */
public final class ListAndWatch implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ListAndWatch.class);
  private static final AtomicInteger THREADS = new AtomicInteger();

  /** The requests of one client, on raw JSON. Implementations are thread-safe. */
  public interface Transport {
    /**
     * One page of {@code GET PATH?limit=500[&continue=C]}, parsed as {@link #parseObject}.
     *
     * @param path e.g. {@code /api/v1/pods}
     * @param continueToken {@code null} for the first page
     * @throws Exception any failure; {@link #isGone} tells a 410
     */
    Map<?, ?> listPage(String path, String continueToken) throws Exception;

    /**
     * Opens the watch stream of {@code path} at {@code resourceVersion} with bookmarks.
     *
     * @throws Exception if it did not answer 2xx, as {@link #listPage}
     */
    LineStream watch(String path, String resourceVersion, long timeoutSeconds) throws Exception;

    /** A JSON object parsed into maps, lists, strings and numbers; throws for a non-object. */
    Map<?, ?> parseObject(String json) throws Exception;

    /** Whether a failure of {@link #listPage} or {@link #watch} is a 410 Gone. */
    boolean isGone(Exception failure);
  }

  /** An open watch stream, read and closed by the watch thread. */
  public interface LineStream extends Closeable {
    /** The next line, {@code null} at the end; throws if the stream failed. */
    String readLine() throws IOException;

    /** Ends the stream from another thread; a client may cancel the request instead of close. */
    default void cancel() throws IOException {
      close();
    }
  }

  /** What the watch hands over, on its thread, in the watch's order. */
  public interface Sink {
    /** A listing is about to be requested (its first page). */
    default void listing() {}

    /**
     * A whole listing: every page's items, parsed, at the first page's version.
     *
     * @param resourceVersion the list's {@code metadata.resourceVersion}, never null
     */
    void listed(String resourceVersion, List<Map<?, ?>> items);

    /** A stream is open at the state the sink holds. */
    default void streaming() {}

    /**
     * One {@code ADDED}, {@code MODIFIED}, {@code DELETED} or {@code BOOKMARK} event.
     *
     * @param object the event's object
     * @return {@code false} to end the stream and list again
     */
    boolean event(String type, Map<?, ?> object);

    /** The stream ended (normally, failed, an ERROR event, closed): none is open now. */
    default void ended() {}
  }

  private final String what;
  private final String path;
  private final Transport transport;
  private final Sink sink;
  private final ThreadFactory threadFactory;
  private final WaitClock time;
  private final Duration watchTimeout;
  private final Object lifecycle = new Object();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final AtomicLong relists = new AtomicLong();
  private Thread thread;
  private volatile boolean closed;
  private volatile boolean relistAsked;
  private volatile LineStream current;
  private String resourceVersion; // the watch thread's

  /**
   * A list and watch of {@code path} for {@code sink}, not started.
   *
   * @param what the sink's name in log lines, e.g. {@code node lock watch}
   * @param path the collection, e.g. {@code /api/v1/pods}
   * @param threadFactory makes the one watch thread
   * @param time the random source of the back-off's and {@code timeoutSeconds}' jitter
   * @param watchTimeout a stream's server-side {@code timeoutSeconds}, at least 1 s
   * @throws IllegalArgumentException if {@code what} or {@code path} is blank or {@code
   *     watchTimeout} is under 1 s
   * @throws NullPointerException if an argument is null
   */
  public ListAndWatch(
      String what,
      String path,
      Transport transport,
      Sink sink,
      ThreadFactory threadFactory,
      WaitClock time,
      Duration watchTimeout) {
    this.what = requireNonBlank(what, "what");
    this.path = requireNonBlank(path, "path");
    this.transport = Objects.requireNonNull(transport, "transport");
    this.sink = Objects.requireNonNull(sink, "sink");
    this.threadFactory = Objects.requireNonNull(threadFactory, "threadFactory");
    this.time = Objects.requireNonNull(time, "waitClock");
    this.watchTimeout = Objects.requireNonNull(watchTimeout, "watchTimeout");
    checkArgument(
        watchTimeout.toSeconds() >= 1, "watchTimeout must be at least 1s: %s", watchTimeout);
  }

  /**
   * A list and watch of {@code path} on a daemon thread {@code hami-lock-watch-N}, streams of 5
   * minutes, jitter from {@link WaitClock#SYSTEM}; see the full constructor.
   */
  public static ListAndWatch of(String what, String path, Transport transport, Sink sink) {
    return new ListAndWatch(
        what,
        path,
        transport,
        sink,
        r -> {
          Thread t = new Thread(r, "hami-lock-watch-" + THREADS.incrementAndGet());
          t.setDaemon(true);
          return t;
        },
        WaitClock.SYSTEM,
        Duration.ofMinutes(5));
  }

  /**
   * Starts the watch thread (once).
   *
   * @return this
   * @throws IllegalStateException if closed
   */
  public ListAndWatch start() {
    synchronized (lifecycle) {
      if (closed) {
        throw new IllegalStateException(what + " is closed");
      }
      if (thread == null) {
        thread = threadFactory.newThread(this::run);
        thread.start();
      }
    }
    return this;
  }

  /** Ends the open stream, if any, and lists again before the next one. */
  public void relist() {
    relistAsked = true;
    Thread running;
    synchronized (lifecycle) {
      running = thread;
    }
    if (running != null) {
      endStream();
      running.interrupt(); // out of a back-off
    }
  }

  /** {@return how many listings the sink got} */
  public long relistCount() {
    return relists.get();
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
    return "%s[%s, relists=%d]".formatted(what, path, relists.get());
  }

  private void run() {
    long backoffMillis = 100;
    while (!closed) {
      Thread.interrupted(); // a relist asked meanwhile already shows in relistAsked
      try {
        if (resourceVersion == null || relistAsked) {
          list();
        }
        if (streamOnce()) {
          backoffMillis = 100;
          continue;
        }
      } catch (LinkageError e) { // not transient (e.g. a package not exported on the module path)
        LOG.error("{} stopped: the Kubernetes client cannot run here ({})", this, e.toString());
        break;
      } catch (Exception e) { // also the undeclared checked exceptions of Kotlin clients (OkHttp)
        if (closed) {
          break;
        }
        LOG.debug("{}: {}", what, e.toString());
        if (transport.isGone(e)) {
          resourceVersion = null;
        }
      } finally {
        if (current != null) {
          current = null;
          sink.ended();
        }
      }
      long sleep = backoffMillis / 2 + time.randomBelow(backoffMillis / 2 + 1);
      backoffMillis = Math.min(5_000, backoffMillis * 2);
      try {
        stop.await(sleep, TimeUnit.MILLISECONDS); // close() counts it down after setting closed
      } catch (InterruptedException e) { // relist() or close(): the loop decides
      }
    }
    LOG.debug("{} stopped", what);
  }

  /** One stream from {@link #resourceVersion}; {@code true} if it ended normally. */
  private boolean streamOnce() throws Exception {
    long seconds = watchTimeout.toSeconds();
    try (LineStream in =
        transport.watch(path, resourceVersion, seconds + time.randomBelow(seconds / 10 + 1))) {
      current = in;
      if (closed) {
        return false;
      }
      sink.streaming();
      String line;
      while (!closed && !relistAsked && (line = in.readLine()) != null) {
        if (!line.isBlank() && !handle(line)) {
          resourceVersion = null;
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
        LOG.debug("{}: closing the stream: {}", what, e.toString());
      }
    }
  }

  /** {@code false} if the stream must be restarted with a listing. */
  private boolean handle(String line) {
    Map<?, ?> event = null;
    try {
      event = transport.parseObject(line);
    } catch (Exception e) { // undecodable
    }
    if (event == null) {
      LOG.debug("{}: ignoring undecodable line {}", what, line);
      return true;
    }
    String type = Objects.requireNonNullElse(text(event, "type"), "");
    if (type.equals("ERROR")) {
      LOG.debug("{}: ERROR event {}: relisting", what, line);
      return false;
    }
    Map<?, ?> object = field(event, "object");
    String version = text(field(object, "metadata"), "resourceVersion");
    resourceVersion = version != null ? version : resourceVersion;
    try {
      return sink.event(type, object);
    } catch (RuntimeException e) { // a sink's bug: it may have missed this event, so list again
      LOG.debug("{}: the sink failed on {} ({}): relisting", what, type, e.toString());
      return false;
    }
  }

  /** Lists every page, then hands the whole listing to the sink. */
  private void list() throws Exception {
    relistAsked = false; // one asked from here on lists again
    sink.listing();
    List<Map<?, ?>> items = new ArrayList<>();
    String listVersion = null;
    try {
      String cont = null;
      do {
        Map<?, ?> page = transport.listPage(path, cont);
        Map<?, ?> meta = field(page, "metadata");
        listVersion = listVersion == null ? text(meta, "resourceVersion") : listVersion;
        if (page.get("items") instanceof List<?> list) {
          list.stream().filter(Map.class::isInstance).forEach(i -> items.add((Map<?, ?>) i));
        }
        cont = text(meta, "continue");
      } while (cont != null && !cont.isEmpty() && !closed);
      if (cont != null && !cont.isEmpty()) { // closed between pages: never hand a part over
        throw new IOException(path + " listing cut short by close()");
      }
      if (listVersion == null) {
        throw new IOException(path + " list carries no metadata.resourceVersion");
      }
    } catch (Exception | Error e) {
      relistAsked = true;
      throw e;
    }
    relists.incrementAndGet();
    try {
      sink.listed(listVersion, items);
    } catch (RuntimeException e) { // a sink's bug: list again after the back-off
      relistAsked = true;
      throw e;
    }
    resourceVersion = listVersion;
  }

  /** {@code object.name} if a map, else empty. */
  public static Map<?, ?> field(Map<?, ?> object, String name) {
    return object.get(name) instanceof Map<?, ?> m ? m : Map.of();
  }

  /** {@code object.name} if a string, else {@code null}. */
  public static String text(Map<?, ?> object, String name) {
    return object.get(name) instanceof String s ? s : null;
  }
}
