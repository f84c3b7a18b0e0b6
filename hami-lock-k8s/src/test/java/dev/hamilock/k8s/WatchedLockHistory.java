package dev.hamilock.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.Call;
import okhttp3.Response;
import okio.BufferedSource;

/**
 * A node lock's history as any client can see it on any API server: a watch on the labelled nodes
 * from the resourceVersion of a LIST, recording every event's lock annotation; a stream that ends
 * is resumed from the last resourceVersion seen (events or bookmarks), a 410 makes the history
 * incomplete ({@link #failure()}). Unlike the emulator's write history this needs no hook inside
 * the server, so the same {@link LockHistoryChecker} judges the real kube-apiserver.
 *
 * <p>Raw JSON lines are parsed (not client-java's models), so no field of a newer server can break
 * the reader.
 */
final class WatchedLockHistory implements AutoCloseable {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** One watch event of one node: its resourceVersion, type and lock annotation afterwards. */
  record Event(long resourceVersion, String type, String node, Optional<String> lock) {}

  /**
   * A lock value's lifetime: the resourceVersion that wrote it and the one that removed or replaced
   * it.
   */
  record Lifetime(String value, long from, long to) {}

  private final ApiClient client;
  private final String labelSelector;
  private final String key;
  private final Map<String, Optional<String>> initial = new HashMap<>();
  private final List<Event> events = new ArrayList<>();
  private final Thread thread;
  private final long listResourceVersion;
  private long lastResourceVersion;
  private volatile boolean closed;
  private volatile Call current;
  private String failure;
  private int streams;

  /**
   * Lists the labelled nodes and starts watching from the list's resourceVersion.
   *
   * @param client a client without read timeout
   * @param labelSelector which nodes
   * @param key the lock annotation
   */
  WatchedLockHistory(ApiClient client, String labelSelector, String key) throws Exception {
    this.client = client;
    this.labelSelector = labelSelector;
    this.key = key;
    JsonNode list;
    try (Response r =
        new CoreV1Api(client).listNode().labelSelector(labelSelector).buildCall(null).execute()) {
      String body = r.body().string();
      if (r.code() != 200) {
        throw new IllegalStateException("LIST nodes answered " + r.code() + ": " + body);
      }
      list = MAPPER.readTree(body);
    }
    for (JsonNode n : list.path("items")) {
      JsonNode v = n.path("metadata").path("annotations").path(key);
      initial.put(
          n.path("metadata").path("name").asText(),
          v.isMissingNode() || v.isNull() ? Optional.empty() : Optional.of(v.asText()));
    }
    this.listResourceVersion = list.path("metadata").path("resourceVersion").asLong();
    this.lastResourceVersion = listResourceVersion;
    this.thread = new Thread(this::run, "watched-lock-history");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    while (!closed) {
      long from;
      synchronized (this) {
        from = lastResourceVersion;
        streams++;
      }
      try {
        Call call =
            new CoreV1Api(client)
                .listNode()
                .labelSelector(labelSelector)
                .watch(true)
                .allowWatchBookmarks(true)
                .resourceVersion(Long.toString(from))
                .timeoutSeconds(300)
                .buildCall(null);
        current = call;
        try (Response r = call.execute()) {
          if (r.code() != 200) {
            fail("watch from " + from + " answered " + r.code() + ": " + r.body().string());
            return;
          }
          BufferedSource in = r.body().source();
          String line;
          while ((line = in.readUtf8Line()) != null) {
            if (!line.isBlank() && !accept(MAPPER.readTree(line))) {
              return;
            }
          }
        }
      } catch (IOException | io.kubernetes.client.openapi.ApiException e) {
        if (closed) {
          return;
        }
        sleep(); // the stream broke: resume from the last resourceVersion seen
      } catch (RuntimeException e) {
        fail("watch reader crashed: " + e);
        return;
      }
    }
  }

  private boolean accept(JsonNode e) {
    String type = e.path("type").asText();
    JsonNode o = e.path("object");
    if (type.equals("ERROR")) {
      fail("watch ERROR event: " + o);
      return false;
    }
    long rv = o.path("metadata").path("resourceVersion").asLong();
    synchronized (this) {
      if (!type.equals("BOOKMARK")) {
        JsonNode v = o.path("metadata").path("annotations").path(key);
        events.add(
            new Event(
                rv,
                type,
                o.path("metadata").path("name").asText(),
                v.isMissingNode() || v.isNull() ? Optional.empty() : Optional.of(v.asText())));
      }
      lastResourceVersion = Math.max(lastResourceVersion, rv);
      notifyAll();
    }
    return true;
  }

  private synchronized void fail(String why) {
    failure = why;
    notifyAll();
  }

  private static void sleep() {
    try {
      Thread.sleep(20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * @return why the history is incomplete, if it is
   */
  synchronized Optional<String> failure() {
    return Optional.ofNullable(failure);
  }

  /**
   * @return how many watch streams were opened (more than 1: resumed)
   */
  synchronized int streams() {
    return streams;
  }

  /**
   * Waits until the watch has delivered an event of {@code node} at or after {@code
   * resourceVersion}.
   *
   * @return whether it did within the timeout
   */
  synchronized boolean awaitSeen(String node, long resourceVersion, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (failure == null
        && listResourceVersion < resourceVersion
        && events.stream()
            .noneMatch(e -> e.node().equals(node) && e.resourceVersion() >= resourceVersion)) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return failure == null;
  }

  /**
   * @return the node's events, in resourceVersion order
   */
  synchronized List<Event> events(String node) {
    return events.stream()
        .filter(e -> e.node().equals(node))
        .sorted(Comparator.comparingLong(Event::resourceVersion))
        .toList();
  }

  /**
   * @return the node's lock value at the LIST, then after each watched event, in resourceVersion
   *     order
   */
  synchronized List<Optional<String>> lockValues(String node) {
    List<Optional<String>> out = new ArrayList<>();
    out.add(initial.getOrDefault(node, Optional.empty()));
    events(node).forEach(e -> out.add(e.lock()));
    return out;
  }

  /**
   * @return every lock value's lifetime on the node (a value that is still there at the end has
   *     {@code to} = {@link Long#MAX_VALUE}), in resourceVersion order
   */
  synchronized List<Lifetime> lifetimes(String node) {
    List<Lifetime> out = new ArrayList<>();
    String value = initial.getOrDefault(node, Optional.empty()).orElse(null);
    long from = 0;
    for (Event e : events(node)) {
      String next = e.lock().orElse(null);
      if (java.util.Objects.equals(value, next)) {
        continue;
      }
      if (value != null) {
        out.add(new Lifetime(value, from, e.resourceVersion()));
      }
      value = next;
      from = e.resourceVersion();
    }
    if (value != null) {
      out.add(new Lifetime(value, from, Long.MAX_VALUE));
    }
    return out;
  }

  /**
   * @return how many times the lock went from absent to present (one per acquisition from a free
   *     node)
   */
  synchronized int acquisitionsSeen(String node) {
    int n = 0;
    List<Optional<String>> values = lockValues(node);
    for (int i = 1; i < values.size(); i++) {
      if (values.get(i - 1).isEmpty() && values.get(i).isPresent()) {
        n++;
      }
    }
    return n;
  }

  @Override
  public void close() {
    closed = true;
    Call c = current;
    if (c != null) {
      c.cancel();
    }
    thread.interrupt();
  }
}
