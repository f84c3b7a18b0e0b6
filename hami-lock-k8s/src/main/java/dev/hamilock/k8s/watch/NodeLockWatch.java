package dev.hamilock.k8s.watch;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.hamilock.core.NodeLock;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Call;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.BufferedSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shared watch of all Nodes per client (not one per waiter) that tells a
 * {@link FairLockReleaseSignal} when a node's lock annotation disappears (design decision 3),
 * so a waiting gang member retries at once instead of at its next 100 ms poll.
 *
 * <p>Protocol: {@code LIST /api/v1/nodes} (pages of 500) to learn the current lock values and a
 * resourceVersion, then {@code WATCH /api/v1/nodes?watch=true&resourceVersion=RV&allowWatchBookmarks=true}
 * on a client without read timeout; {@code ADDED}/{@code MODIFIED}/{@code BOOKMARK} advance RV,
 * a value going from present to absent calls {@link FairLockReleaseSignal#released}, a
 * {@code DELETED} node calls {@link FairLockReleaseSignal#wakeAll}. A dropped watch resumes from
 * the last RV; an {@code ERROR} event or a 410 Gone/Expired answer starts over with a LIST, and
 * the differences found by the relist are signalled too. Failures back off from 100 ms to 5 s
 * (jittered) and are logged at DEBUG/INFO. Waiters never depend on the watch: the acquire loop's
 * poll is the fallback whenever the watch is down or late. Events are parsed schema-free (unknown
 * fields are ignored).
 *
 * <p><b>Reliable mode.</b> While a stream is open on a synced view the watch marks its signal
 * reliable ({@link FairLockReleaseSignal#isReliable(String)}): a stream resumed from a
 * resourceVersion replays every event since, and one that cannot be resumed (410) relists and
 * signals the differences, so no release is missed and waiters may wait for the wake-up (up to
 * {@code RetryPolicy.watchedPollInterval()}, 1 s) instead of polling every 100 ms. The flag is
 * cleared as soon as the stream ends or fails, and by {@link #close()}. After a relist, every
 * node that has waiters and is not locked in the fresh list is signalled as released (its lock
 * may have come and gone while the watch was down). In the same mode
 * {@link #observedLockValue(String)} offers the watched value, so a contended attempt can skip the
 * GET that would otherwise tell who holds the lock.
 *
 * <p>One daemon thread (from the configured {@link ThreadFactory}) runs the loop between
 * {@link #start()} and {@link #close()}; {@link #close()} cancels the open call and joins the
 * thread, so nothing leaks.
 */
public final class NodeLockWatch implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeLockWatch.class);
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final KubeHttp http;
    private final FairLockReleaseSignal signal;
    private final String key;
    private final Duration watchTimeout;
    private final ThreadFactory threadFactory;

    private final Object lifecycle = new Object();
    private final CountDownLatch stop = new CountDownLatch(1);
    private final CountDownLatch firstSync = new CountDownLatch(1);
    private final AtomicLong relists = new AtomicLong();
    private final AtomicLong releases = new AtomicLong();
    private Thread thread;
    private volatile boolean closed;
    private volatile boolean connected;
    private volatile Call current;

    /** Lock values of locked nodes, as last seen; written only by the watch thread. */
    private final Map<String, String> values = new java.util.concurrent.ConcurrentHashMap<>();
    private String resourceVersion;

    private NodeLockWatch(Builder b) {
        this.http = new KubeHttp(b.apiClient, b.watchApiClient, b.requestTimeout);
        this.signal = b.signal;
        this.key = b.key;
        this.watchTimeout = b.watchTimeout;
        this.threadFactory = b.threadFactory;
    }

    /**
     * @param apiClient the client for LIST (its credentials are reused for the watch)
     * @param signal    the signal to feed
     * @return a builder (key {@code hami.io/mutex.lock}, request timeout 10 s, server-side watch
     *         timeout 5 min, daemon thread {@code hami-lock-node-watch-N})
     * @throws IllegalArgumentException if an argument is null
     */
    public static Builder builder(ApiClient apiClient, FairLockReleaseSignal signal) {
        if (apiClient == null) {
            throw new IllegalArgumentException("apiClient must not be null");
        }
        if (signal == null) {
            throw new IllegalArgumentException("signal must not be null");
        }
        return new Builder(apiClient, signal);
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

    /** @return the signal this watch feeds */
    public FairLockReleaseSignal signal() {
        return signal;
    }

    /** @return whether a watch stream is open right now */
    public boolean isConnected() {
        return connected;
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
     * reliable (stream open on a synced view). It may lag the server by the event delivery time,
     * so callers must use it only where a stale value is safe: as the expected value of a
     * compare-and-set, or to decide to wait (a release is then still signalled).
     *
     * @param node the node name
     * @return the watched value of the lock annotation; empty if the node is not locked in the
     *         watched view, unknown, or the watch is not reliable right now
     */
    public Optional<String> observedLockValue(String node) {
        if (!connected || node == null) {
            return Optional.empty();
        }
        return Optional.ofNullable(values.get(node));
    }

    /** @return how many times the node list was (re)loaded, including the first */
    public long relistCount() {
        return relists.get();
    }

    /** @return how many lock releases (value present → absent) this watch has signalled */
    public long releaseCount() {
        return releases.get();
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
        signal.reliable(false);
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
        connected = false;
    }

    @Override
    public String toString() {
        return "NodeLockWatch[key=" + key + ", connected=" + connected + ", relists=" + relists.get() + "]";
    }

    // ---------------------------------------------------------------------------------------

    private void run() {
        long backoffMillis = 100;
        while (!closed) {
            try {
                if (resourceVersion == null) {
                    relist();
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
            } catch (LinkageError e) {
                // not transient: the Kubernetes client cannot run in this JVM set-up (e.g. an OkHttp
                // internal package a client-java call needs is not exported on the module path).
                // Say so once and stop instead of dying with a bare stack trace; waiters poll.
                LOG.error("node lock watch for {} stopped, waiting gang members fall back to polling: the Kubernetes"
                        + " client cannot run here ({}); on the module path a client-java call may need e.g."
                        + " --add-exports okhttp3/okhttp3.internal.http=io.kubernetes.client.java.api", key, e.toString());
                break;
            } finally {
                connected = false;
                signal.reliable(false);
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
        LOG.debug("node lock watch stopped");
    }

    /** LIST all nodes, diff against the cache, signal what changed. */
    private void relist() throws ApiException {
        Map<String, String> fresh = new HashMap<>();
        Set<String> names = new HashSet<>();
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
                    if (!item.isJsonObject()) {
                        continue;
                    }
                    Optional<String> name = obj(item.getAsJsonObject(), "metadata").flatMap(m -> str(m, "name"));
                    if (name.isEmpty()) {
                        continue;
                    }
                    names.add(name.get());
                    lockValue(item.getAsJsonObject()).ifPresent(v -> fresh.put(name.get(), v));
                }
            }
        } while (cont != null && !closed);
        if (listVersion == null) {
            throw new ApiException(0, "node list carries no metadata.resourceVersion");
        }
        relists.incrementAndGet();
        Set<String> signalled = new HashSet<>();
        for (Map.Entry<String, String> old : values.entrySet()) {
            String node = old.getKey();
            if (!names.contains(node)) {
                signal.wakeAll(node);
                signalled.add(node);
            } else if (!fresh.containsKey(node)) {
                releases.incrementAndGet();
                signal.released(node);
                signalled.add(node);
            }
        }
        values.keySet().retainAll(fresh.keySet());
        values.putAll(fresh);
        resourceVersion = listVersion;
        // a waiter may have seen a lock that came and went while the watch was down: no diff
        // shows it, so wake the first waiter of every node that is free now
        for (String node : signal.nodesWithWaiters()) {
            if (names.contains(node) && !fresh.containsKey(node) && !signalled.contains(node)) {
                signal.released(node);
            }
        }
        LOG.debug("node lock watch: listed {} nodes ({} locked) at resourceVersion {}", names.size(), fresh.size(),
                listVersion);
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
        q.add(new Pair("timeoutSeconds", Long.toString(seconds + ThreadLocalRandom.current().nextLong(seconds / 10 + 1))));
        Call call = http.watchCall("/api/v1/nodes", q);
        current = call;
        if (closed) {
            return false;
        }
        try (Response response = call.execute()) {
            if (!response.isSuccessful()) {
                ResponseBody body = response.body();
                throw new ApiException(response.code(), response.headers().toMultimap(),
                        body == null ? "" : body.string());
            }
            ResponseBody body = response.body();
            if (body == null) {
                return false;
            }
            connected = true;
            signal.reliable(true);
            firstSync.countDown();
            BufferedSource source = body.source();
            String line;
            while (!closed && (line = source.readUtf8Line()) != null) {
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

    /** @return {@code false} if the stream must be restarted with a relist */
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
        String node = name.get();
        if (type.equals("DELETED")) {
            values.remove(node);
            signal.wakeAll(node);
            return true;
        }
        Optional<String> value = lockValue(object.get());
        String old = value.isPresent() ? values.put(node, value.get()) : values.remove(node);
        if (old != null && value.isEmpty()) {
            releases.incrementAndGet();
            LOG.debug("node lock watch: node {} lock {}=\"{}\" released", node, key, old);
            signal.released(node);
        }
        return true;
    }

    private Optional<String> lockValue(JsonObject node) {
        return obj(node, "metadata").flatMap(m -> obj(m, "annotations")).flatMap(a -> str(a, key));
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
        private final FairLockReleaseSignal signal;
        private ApiClient watchApiClient;
        private String key = NodeLock.DEFAULT_KEY;
        private Duration requestTimeout = Duration.ofSeconds(10);
        private Duration watchTimeout = Duration.ofMinutes(5);
        private ThreadFactory threadFactory = r -> {
            Thread t = new Thread(r, "hami-lock-node-watch-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        };

        private Builder(ApiClient apiClient, FairLockReleaseSignal signal) {
            this.apiClient = apiClient;
            this.signal = signal;
        }

        /**
         * @param key the lock annotation to watch (default {@code hami.io/mutex.lock}); non-blank
         * @return this builder
         */
        public Builder key(String key) {
            this.key = key;
            return this;
        }

        /**
         * @param watchApiClient client whose HTTP settings the watch uses (its read timeout is
         *                       replaced by none); default: derived from the main client
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
         * @param watchTimeout server-side {@code timeoutSeconds} of one watch stream, plus up to
         *                     10 % jitter (default 5 min); at least 1 s
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
         * @return the watch, not started
         * @throws IllegalArgumentException naming the setting if the key is blank, a timeout is
         *                                  invalid or the thread factory is null
         */
        public NodeLockWatch build() {
            if (key == null || key.isBlank()) {
                throw new IllegalArgumentException("key must not be null or blank: " + key);
            }
            Validation.positive("requestTimeout", requestTimeout);
            Validation.positive("watchTimeout", watchTimeout);
            if (watchTimeout.toSeconds() < 1) {
                throw new IllegalArgumentException("watchTimeout must be at least 1s: " + watchTimeout);
            }
            if (threadFactory == null) {
                throw new IllegalArgumentException("threadFactory must not be null");
            }
            return new NodeLockWatch(this);
        }
    }
}
