package dev.hamilock.fabric8;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.annotation.NodeLockReleases;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shared watch of all Nodes per fabric8 client feeding core's {@link FairReleaseQueue} of each
 * lock key, the fabric8 twin of hami-lock-k8s's {@code NodeLockWatch}: the release detection is
 * core's {@link NodeLockReleases} (a value of a key going from present to absent ⇒ released, a
 * deleted node ⇒ every waiter woken, a relist diffed and signalled). This class only lists ({@code
 * nodes().list}, pages of 500) and streams: {@code GET
 * /api/v1/nodes?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=300..330}
 * through fabric8's HTTP client, one JSON event per line (Kubernetes API concepts, "Efficient
 * detection of changes"). It does not use fabric8's {@code Watcher}: that one opens a WebSocket
 * first and reconnects on its own, so this watch could not tell when its queues may be called
 * reliable (while a stream is open on a synced view). A stream that ends resumes from the last
 * resourceVersion; an {@code ERROR} event or 410 Gone relists. Failures back off from 100 ms to 5 s
 * (jittered), logged at DEBUG. One daemon thread ({@code hami-lock-fabric8-node-watch-N}) between
 * {@link #start()} and {@link #close()}. Waiters never depend on the watch: the acquire loop's poll
 * is the fallback.
 */
public final class Fabric8NodeLockWatch implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Fabric8NodeLockWatch.class);
  private static final AtomicInteger THREADS = new AtomicInteger();

  private final KubernetesClient client;
  private final NodeLockReleases releases = new NodeLockReleases();
  private final CountDownLatch firstSync = new CountDownLatch(1);
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Object lifecycle = new Object();
  private Thread thread;
  private volatile boolean closed;
  private volatile InputStream current;
  private String resourceVersion;

  private Fabric8NodeLockWatch(KubernetesClient client) {
    this.client = client;
  }

  /**
   * @param client a fabric8 client; not closed by the watch
   * @return the watch, not started; add keys with {@link #releaseSignal(String)}
   * @throws NullPointerException if {@code client} is null
   */
  public static Fabric8NodeLockWatch create(KubernetesClient client) {
    return new Fabric8NodeLockWatch(Objects.requireNonNull(client, "client"));
  }

  /**
   * The wake-up queue of lock key {@code key}, fed by this watch. Adding a key to a running watch
   * makes it relist once (the queue is not reliable meanwhile).
   *
   * @param key the lock annotation, e.g. {@code hami.io/mutex.lock}; non-blank
   * @return the key's queue (the same instance for the same key)
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is blank
   * @throws IllegalStateException if the watch is closed and {@code key} is new to it
   */
  public FairReleaseQueue releaseSignal(String key) {
    Objects.requireNonNull(key, "key");
    FairReleaseQueue q;
    boolean added;
    synchronized (lifecycle) {
      added = !releases.keys().contains(key);
      if (closed && added) {
        throw new IllegalStateException("node lock watch is closed: cannot add key " + key);
      }
      q = releases.queue(key);
    }
    Thread t;
    synchronized (lifecycle) {
      t = thread;
    }
    if (added && t != null) {
      // end the stream (a read blocked in fabric8's body stream wakes on the interrupt); the
      // loop relists with the new key
      closeQuietly(current);
      t.interrupt();
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
   * @throws IllegalStateException if closed
   */
  public Fabric8NodeLockWatch start() {
    synchronized (lifecycle) {
      if (closed) {
        throw new IllegalStateException("node lock watch is closed");
      }
      if (thread == null) {
        thread = new Thread(this::run, "hami-lock-fabric8-node-watch-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
        thread.start();
      }
    }
    return this;
  }

  /**
   * @param timeout the longest wait
   * @return {@code true} once the first list was applied and a stream opened, {@code false} on
   *     timeout
   * @throws InterruptedException if interrupted
   */
  public boolean awaitSynced(Duration timeout) throws InterruptedException {
    return firstSync.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * @return whether a stream is open on a synced view right now
   */
  public boolean isConnected() {
    return releases.isConnected();
  }

  /**
   * The watched lock value, for the store's witness ({@code
   * AnnotationLockStore.Builder#watchedLockValues}); see {@link
   * NodeLockReleases#observedLockValue}.
   *
   * @param node the node name
   * @param key the lock key
   * @return the watched value; empty if unlocked, unknown, not watched or not reliable now
   */
  public Optional<String> observedLockValue(String node, String key) {
    return releases.observedLockValue(node, key);
  }

  /**
   * @return how many times the node list was (re)loaded
   */
  public long relistCount() {
    return releases.relistCount();
  }

  /**
   * @return how many releases this watch signalled
   */
  public long releaseCount() {
    return releases.releaseCount();
  }

  /** Stops the watch: ends the open stream and joins the thread (up to 5 s). Idempotent. */
  @Override
  public void close() {
    Thread t;
    synchronized (lifecycle) {
      closed = true;
      t = thread;
    }
    stop.countDown();
    releases.connected(false);
    closeQuietly(current);
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
    return "Fabric8NodeLockWatch[keys=" + releases.keys() + ", connected=" + isConnected() + "]";
  }

  private void run() {
    long backoffMillis = 100;
    while (!closed) {
      Thread.interrupted(); // a key added meanwhile already shows in keysChanged()
      try {
        if (resourceVersion == null || releases.keysChanged()) {
          releases.relist(this::listNodes);
        }
        if (watchOnce()) {
          backoffMillis = 100;
          continue;
        }
      } catch (KubernetesClientException | IOException | ExecutionException e) {
        if (closed) {
          break;
        }
        LOG.debug("fabric8 node lock watch: {}", e.toString());
        if (e instanceof KubernetesClientException k && k.getCode() == 410) {
          resourceVersion = null;
        }
      } catch (InterruptedException e) {
        if (closed) {
          break;
        }
      } finally {
        releases.connected(false);
        current = null;
      }
      long sleep = backoffMillis / 2 + ThreadLocalRandom.current().nextLong(backoffMillis / 2 + 1);
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
    LOG.debug("fabric8 node lock watch stopped");
  }

  /** LIST all nodes (pages of 500); sets the resume point. */
  private Map<String, Map<String, String>> listNodes() {
    Map<String, Map<String, String>> nodes = new HashMap<>();
    String cont = null;
    String listVersion = null;
    do {
      ListOptions options = new ListOptions();
      options.setLimit(500L);
      options.setContinue(cont);
      NodeList page = client.nodes().list(options);
      if (listVersion == null) {
        listVersion = page.getMetadata().getResourceVersion();
      }
      cont = page.getMetadata().getContinue();
      cont = cont == null || cont.isEmpty() ? null : cont;
      for (Node n : page.getItems()) {
        Map<String, String> a = n.getMetadata().getAnnotations();
        nodes.put(n.getMetadata().getName(), a == null ? Map.of() : a);
      }
    } while (cont != null && !closed);
    if (listVersion == null) {
      throw new KubernetesClientException("node list carries no metadata.resourceVersion");
    }
    resourceVersion = listVersion;
    return nodes;
  }

  /**
   * One stream from {@link #resourceVersion} until it ends.
   *
   * @return {@code true} if it ended normally (resume at once), {@code false} after an error
   */
  private boolean watchOnce() throws IOException, ExecutionException, InterruptedException {
    HttpClient http = client.getHttpClient();
    String url =
        client.getMasterUrl()
            + "api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion="
            + URLEncoder.encode(resourceVersion, StandardCharsets.UTF_8)
            + "&timeoutSeconds="
            + (300 + ThreadLocalRandom.current().nextInt(31));
    HttpResponse<InputStream> r =
        http.sendAsync(http.newHttpRequestBuilder().uri(url).build(), InputStream.class).get();
    try (InputStream in = r.body()) {
      if (!r.isSuccessful()) {
        throw new KubernetesClientException("watch nodes: HTTP " + r.code(), r.code(), null);
      }
      current = in;
      if (closed) {
        return false;
      }
      releases.connected(true);
      firstSync.countDown();
      BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      String line;
      while (!closed && !releases.keysChanged() && (line = lines.readLine()) != null) {
        if (!line.isBlank() && !handle(line)) {
          return false;
        }
      }
      return true;
    }
  }

  /**
   * @return {@code false} if the stream must be restarted with a relist
   */
  @SuppressWarnings("unchecked")
  private boolean handle(String line) {
    Map<String, Object> event;
    try {
      event = client.getKubernetesSerialization().unmarshal(line, Map.class);
    } catch (RuntimeException e) {
      LOG.debug("fabric8 node lock watch: ignoring undecodable line {}", line);
      return true;
    }
    String type = String.valueOf(event.get("type"));
    if (type.equals("ERROR")) {
      LOG.debug("fabric8 node lock watch: ERROR event {}: relisting", event.get("object"));
      resourceVersion = null;
      return false;
    }
    Map<String, Object> meta =
        event.get("object") instanceof Map<?, ?> o && o.get("metadata") instanceof Map<?, ?> m
            ? (Map<String, Object>) m
            : Map.of();
    if (meta.get("resourceVersion") instanceof String rv) {
      resourceVersion = rv;
    }
    if (!type.equals("BOOKMARK") && meta.get("name") instanceof String name) {
      Map<String, String> annotations = new HashMap<>();
      if (meta.get("annotations") instanceof Map<?, ?> a) {
        a.forEach(
            (k, v) -> {
              if (v instanceof String s) {
                annotations.put(String.valueOf(k), s);
              }
            });
      }
      releases.event(type.equals("DELETED"), name, annotations);
    }
    return true;
  }

  private static void closeQuietly(InputStream in) {
    if (in != null) {
      try {
        in.close();
      } catch (IOException e) {
        LOG.debug("closing the watch stream: {}", e.toString());
      }
    }
  }
}
