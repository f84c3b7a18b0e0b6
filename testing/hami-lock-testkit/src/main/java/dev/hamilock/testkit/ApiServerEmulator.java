package dev.hamilock.testkit;

import static dev.hamilock.testkit.Checks.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.hamilock.testkit.selector.FieldSelector;
import dev.hamilock.testkit.selector.LabelSelector;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-process Kubernetes API server emulator for tests over plain HTTP (JDK HTTP server): core/v1
 * {@code namespaces}, {@code nodes}, {@code pods} (with {@code binding} and {@code status}), {@code
 * configmaps}, {@code scheduling.x-k8s.io/v1alpha1 podgroups}, and with {@link
 * Builder#servingDra(boolean)} {@code resource.k8s.io/v1}. One global revision under one lock;
 * status codes, bodies, patch types, watches and what is not emulated are pinned by {@code
 * CONFORMANCE.md} ({@code kube-api-notes.md} §2/§6). Not emulated: admission, server-side apply
 * (415), dry-run (400), YAML/protobuf (415), graceful pod deletion, namespace termination,
 * managedFields, TLS, authentication.
 *
 * <p>Loading this class sets {@code sun.net.httpserver.nodelay=true} and {@code
 * sun.net.httpserver.maxIdleConnections=1000000} (unless set), which the JDK reads once, before any
 * other {@code HttpServer}: otherwise each request costs ~44 ms of Nagle delay, and beyond 200 idle
 * keep-alive connections the server silently closes one after its response ("unexpected end of
 * stream"), which Go's net/http in kube-apiserver never does.
 *
 * <p>All methods are thread-safe.
 */
public final class ApiServerEmulator implements KubeBackend {
  /** JDK HTTP server property: idle keep-alive connections kept open (JDK default 200). */
  static final String MAX_IDLE_CONNECTIONS = "sun.net.httpserver.maxIdleConnections";

  static {
    System.setProperty("sun.net.httpserver.nodelay", "true");
    if (System.getProperty(MAX_IDLE_CONNECTIONS) == null) {
      System.setProperty(MAX_IDLE_CONNECTIONS, "1000000");
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(ApiServerEmulator.class);
  private java.nio.file.Path kubeconfigFile;
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  /** Name of the unknown field added by {@link #setInjectUnknownFields(boolean)}. */
  public static final String UNKNOWN_FIELD = "hamiTestUnknownField";

  private final Store store;
  private final HttpServer server;
  private final ThreadPoolExecutor executor;
  private final Duration bookmarkInterval;
  private final Duration clientReadTimeout;
  private final boolean servesDra;
  private final Map<RequestKey, LongAdder> counters = new ConcurrentHashMap<>();
  private final List<FaultHandle> faults = new CopyOnWriteArrayList<>();
  private final List<ApiClient> clients = new CopyOnWriteArrayList<>();
  private volatile Latency latency = Latency.NONE;
  private volatile boolean injectUnknownFields;
  private volatile boolean closed;
  private ApiClient apiClient;
  private ApiClient watchApiClient;

  private ApiServerEmulator(Builder b) throws IOException {
    this.store = new Store(b.clock, b.eventHistoryLimit, b.writeHistoryLimit);
    this.bookmarkInterval = b.bookmarkInterval;
    this.clientReadTimeout = b.clientReadTimeout;
    this.servesDra = b.servesDra;
    int id = INSTANCES.incrementAndGet();
    AtomicInteger threads = new AtomicInteger();
    this.executor =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, "hami-testkit-" + id + "-http-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), b.port), 256);
    server.createContext("/", new Frontend(this, store));
    server.setExecutor(executor);
    server.start();
    LOG.debug("Kubernetes API emulator listening on {}", url());
  }

  /**
   * @return a running emulator on 127.0.0.1, ephemeral port, defaults
   * @throws UncheckedIOException if the port cannot be bound
   */
  public static ApiServerEmulator start() {
    return builder().start();
  }

  /**
   * @param port TCP port on 127.0.0.1, 0 for an ephemeral one
   * @throws IllegalArgumentException if the port is out of range
   * @throws UncheckedIOException if the port cannot be bound
   */
  public static ApiServerEmulator start(int port) {
    return builder().port(port).start();
  }

  /**
   * @return a builder with the defaults (port 0, system UTC clock, 10 000 events of watch history)
   */
  public static Builder builder() {
    return new Builder();
  }

  // --------------------------------------------------------------- addresses and clients

  /**
   * @return the base URL, e.g. {@code http://127.0.0.1:41234}
   */
  public String url() {
    return "http://" + hostPort();
  }

  /**
   * @return the bound TCP port
   */
  public int port() {
    return server.getAddress().getPort();
  }

  String hostPort() {
    return server.getAddress().getAddress().getHostAddress() + ":" + port();
  }

  /**
   * @return the shared client, read timeout {@link Builder#clientReadTimeout} (a lost answer is
   *     {@code ApiException} code 0, not a hang)
   */
  public synchronized ApiClient apiClient() {
    if (apiClient == null) {
      apiClient = newApiClient(clientReadTimeout);
    }
    return apiClient;
  }

  /**
   * @return the shared client for watches and informers, no read timeout
   */
  public synchronized ApiClient watchApiClient() {
    if (watchApiClient == null) {
      watchApiClient = newApiClient(Duration.ZERO);
    }
    return watchApiClient;
  }

  /**
   * @return a new client with its own connection pool and the configured read timeout
   */
  public ApiClient newApiClient() {
    return newApiClient(clientReadTimeout);
  }

  /**
   * A new client; its connection pool is released by {@link #close()}.
   *
   * @param readTimeout read timeout, {@link Duration#ZERO} for none; not negative
   */
  public ApiClient newApiClient(Duration readTimeout) {
    Objects.requireNonNull(readTimeout, "readTimeout");
    checkArgument(!readTimeout.isNegative(), "readTimeout must not be negative: %s", readTimeout);
    ApiClient c =
        new ClientBuilder()
            .setBasePath(url())
            .setVerifyingSsl(false)
            .setReadTimeout(readTimeout)
            .build();
    clients.add(c);
    return c;
  }

  /**
   * @return kubeconfig YAML (plain HTTP, no credentials, context {@code hami-emulator})
   */
  public String kubeconfig() {
    return "apiVersion: v1\nkind: Config\nclusters:\n- name: hami-emulator\n  cluster:\n"
        + "    server: "
        + url()
        + "\ncontexts:\n- name: hami-emulator\n  context:\n"
        + "    cluster: hami-emulator\n    user: hami-emulator\ncurrent-context: hami-emulator\n"
        + "users:\n- name: hami-emulator\n  user: {}\n";
  }

  @Override
  public Kind kind() {
    return Kind.EMULATOR;
  }

  /**
   * @return {@link #kubeconfig()} in a temporary file, deleted by {@link #close()}
   * @throws UncheckedIOException if it cannot be written
   */
  @Override
  public synchronized java.nio.file.Path kubeconfigFile() {
    if (kubeconfigFile == null) {
      try {
        java.nio.file.Path f = java.nio.file.Files.createTempFile("hami-emulator-", ".kubeconfig");
        java.nio.file.Files.writeString(f, kubeconfig());
        kubeconfigFile = f;
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot write the emulator's kubeconfig: " + e.getMessage(), e);
      }
    }
    return kubeconfigFile;
  }

  boolean servesDra() {
    return servesDra;
  }

  /** Whether requests for {@code rt} are served: resource.k8s.io only when told to. */
  boolean serves(ResourceType rt) {
    return servesDra || !rt.group().equals(ResourceType.DRA_GROUP);
  }

  // --------------------------------------------------------------- seeding

  private ResourceType type(String resource) {
    Objects.requireNonNull(resource, "resource");
    return ResourceType.lookup(resource)
        .filter(this::serves)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "unknown resource \""
                        + resource
                        + "\"; known: namespaces, nodes, pods, configmaps, podgroups"
                        + (servesDra
                            ? ", resourceslices, resourceclaims, deviceclasses"
                            : " (resource.k8s.io/v1 only with builder().servingDra(true))")));
  }

  private static ObjectNode toTree(Object object) {
    Objects.requireNonNull(object, "object");
    JsonNode n;
    try {
      if (object instanceof String s) {
        n = Frontend.MAPPER.readTree(s);
      } else if (object instanceof JsonNode j) {
        n = j.deepCopy();
      } else {
        n = Frontend.MAPPER.valueToTree(object);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("object is not valid JSON: " + e.getMessage(), e);
    }
    if (!(n instanceof ObjectNode o)) {
      throw new IllegalArgumentException("object must be a JSON object: " + object);
    }
    return o;
  }

  private static IllegalStateException rejected(StatusError e) {
    return new IllegalStateException(
        "emulator rejected the write (" + e.code + " " + e.reason + "): " + e.getMessage(), e);
  }

  /**
   * Creates directly in the store, bypassing HTTP (no counters, faults or latency); namespaced
   * objects default to namespace {@code default}.
   *
   * @throws IllegalArgumentException if the object is not JSON or its kind is not served
   * @throws IllegalStateException if the store rejects it, with the apiserver's message
   */
  @Override
  public JsonNode create(Object object) {
    ObjectNode o = toTree(object);
    String apiVersion = o.path("apiVersion").asText("");
    String kind = o.path("kind").asText("");
    ResourceType rt =
        ResourceType.byKind(apiVersion, kind)
            .filter(this::serves)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "unsupported apiVersion/kind: \"" + apiVersion + "\"/\"" + kind + "\""));
    try {
      return store.create(rt, null, o, true, "seed").deepCopy();
    } catch (StatusError e) {
      throw rejected(e);
    }
  }

  /**
   * Creates a pod, and its namespace if missing.
   *
   * @throws IllegalStateException if a pod of that name already exists
   */
  public JsonNode createPod(TestPod pod) {
    Objects.requireNonNull(pod, "pod");
    if (get("namespaces", null, pod.namespace()).isEmpty()) {
      createNamespace(pod.namespace());
    }
    return create(pod.toJson());
  }

  /**
   * @throws IllegalStateException if a node of that name already exists
   */
  public JsonNode createNode(TestNode node) {
    Objects.requireNonNull(node, "node");
    return create(node.toJson());
  }

  /**
   * @throws IllegalArgumentException for an unknown resource
   */
  @Override
  public Optional<JsonNode> get(String resource, String namespace, String name) {
    return store.find(type(resource), namespace, name).map(ObjectNode::deepCopy);
  }

  /** Lists from the store, sorted by namespace and name. */
  @Override
  public List<JsonNode> list(String resource, String namespace) {
    List<JsonNode> out = new ArrayList<>();
    for (ObjectNode o :
        store
            .list(
                type(resource),
                namespace,
                LabelSelector.EVERYTHING,
                FieldSelector.EVERYTHING,
                0,
                null)
            .items()) {
      out.add(o.deepCopy());
    }
    return out;
  }

  /**
   * Changes the object in the store; recorded in the history with verb {@code mutate}.
   *
   * @throws IllegalStateException if the object does not exist or the result is rejected
   */
  @Override
  public JsonNode mutate(
      String resource, String namespace, String name, UnaryOperator<ObjectNode> mutation) {
    ResourceType rt = type(resource);
    Objects.requireNonNull(mutation, "mutation");
    try {
      ObjectNode cur = store.get(rt, namespace, name);
      ObjectNode next = mutation.apply(cur.deepCopy());
      ((ObjectNode) next.path("metadata")).remove("resourceVersion");
      ObjectNode result = store.update(rt, namespace, name, next, false, "mutate");
      if (rt.hasStatus() && !cur.path("status").equals(next.path("status"))) {
        ObjectNode withStatus = result.deepCopy();
        if (next.has("status")) {
          withStatus.set("status", next.get("status"));
        } else {
          withStatus.remove("status");
        }
        result = store.update(rt, namespace, name, withStatus, true, "mutate");
      }
      return result.deepCopy();
    } catch (StatusError e) {
      throw rejected(e);
    }
  }

  @Override
  public boolean delete(String resource, String namespace, String name) {
    try {
      store.delete(type(resource), namespace, name, null, null, "delete");
      return true;
    } catch (StatusError e) {
      if (e.code == 404) {
        return false;
      }
      throw rejected(e);
    }
  }

  /**
   * @return every committed write to one object, oldest first, at most {@link
   *     Builder#writeHistoryLimit(int)}; survives deletion and re-creation
   */
  public List<WriteRecord> history(String resource, String namespace, String name) {
    return store.history(type(resource), namespace, name);
  }

  /**
   * @return the current global revision (the resourceVersion of the latest write)
   */
  public long revision() {
    return store.revision();
  }

  // --------------------------------------------------------------- test hooks

  /**
   * @param rule tried after earlier rules; the first active match fires
   * @return a handle to observe or remove it
   */
  public FaultHandle addFault(FaultRule rule) {
    FaultHandle h = new FaultHandle(Objects.requireNonNull(rule, "rule"));
    faults.add(h);
    return h;
  }

  /** Removes every fault rule. */
  public void clearFaults() {
    faults.forEach(FaultHandle::remove);
    faults.clear();
  }

  Optional<FaultRule> takeFault(RequestInfo info) {
    for (FaultHandle h : faults) {
      if (h.tryTake(info)) {
        if (!h.isActive()) {
          faults.remove(h);
        }
        return Optional.of(h.rule());
      }
    }
    return Optional.empty();
  }

  /**
   * Sets the latency added before every request (watch events themselves are not delayed).
   *
   * @param latency e.g. {@code Latency.fixed(Duration.ofMillis(2))}, or {@link Latency#NONE}
   */
  public void setLatency(Latency latency) {
    this.latency = Objects.requireNonNull(latency, "latency");
  }

  /**
   * @return the current injected latency
   */
  public Latency latency() {
    return latency;
  }

  /**
   * @param on whether every object in a response gets a field {@value #UNKNOWN_FIELD} in {@code
   *     metadata} and {@code status} (client-java's strict models reject it)
   */
  public void setInjectUnknownFields(boolean on) {
    this.injectUnknownFields = on;
  }

  ObjectNode decorate(ObjectNode o) {
    if (!injectUnknownFields) {
      return o;
    }
    ObjectNode c = o.deepCopy();
    ((ObjectNode) c.get("metadata")).put(UNKNOWN_FIELD, "injected");
    JsonNode status = c.get("status");
    ObjectNode s = status instanceof ObjectNode so ? so : c.putObject("status");
    s.put(UNKNOWN_FIELD, "injected");
    return c;
  }

  /**
   * Ends every open watch with a normal end of stream.
   *
   * @return how many watches were closed
   */
  public int dropWatches() {
    List<Watcher> ws = store.watchers();
    for (Watcher w : ws) {
      w.close();
      store.unregister(w);
    }
    return ws.size();
  }

  /**
   * Ends every open watch ({@link #dropWatches()}) and holds the next watch of {@code resource} in
   * the server until {@code resume} is counted down (at most 30 s): a client's watch that has
   * fallen behind. Returns once that watch arrived, after any listing its client makes first.
   *
   * @param resource e.g. {@code pods}
   * @throws IllegalStateException if no watch of {@code resource} arrived within 10 s
   * @throws InterruptedException if interrupted while waiting for it
   */
  public void holdUpNextWatch(String resource, CountDownLatch resume) throws InterruptedException {
    CountDownLatch arrived = new CountDownLatch(1);
    addFault(
        FaultRule.matching()
            .verb("watch")
            .resource(resource)
            .times(1)
            .invoke(
                r -> {
                  arrived.countDown();
                  try {
                    resume.await(30, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }));
    dropWatches();
    if (!arrived.await(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("no watch of " + resource + " arrived within 10 s");
    }
  }

  /**
   * @return the number of watches currently open
   */
  public int openWatches() {
    return store.watchers().size();
  }

  /**
   * Bumps the revision once; open watches continue, a watch from an older resourceVersion gets an
   * ERROR event with 410 Expired ({@link #dropWatches()} forces that).
   */
  @Override
  public long compact() {
    return store.compact();
  }

  void count(RequestKey key) {
    counters.computeIfAbsent(key, k -> new LongAdder()).increment();
  }

  /** Sorted by verb and resource. */
  @Override
  public Map<RequestKey, Long> requestCounts() {
    Map<RequestKey, Long> out = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  @Override
  public void resetCounters() {
    counters.clear();
  }

  Duration bookmarkInterval() {
    return bookmarkInterval;
  }

  Store store() {
    return store;
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * Stops the server: closes open watches, the listener and the request threads (waiting up to 5 s
   * for them), and releases the connection pools of clients made by this emulator. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    dropWatches();
    server.stop(0);
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("emulator request threads did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (ApiClient c : clients) {
      c.getHttpClient().dispatcher().executorService().shutdown();
      c.getHttpClient().connectionPool().evictAll();
    }
    clients.clear();
    synchronized (this) {
      if (kubeconfigFile != null) {
        try {
          java.nio.file.Files.deleteIfExists(kubeconfigFile);
        } catch (IOException e) {
          LOG.warn("cannot delete {}: {}", kubeconfigFile, e.toString());
        }
      }
    }
  }

  /** Configures an {@link ApiServerEmulator}. */
  public static final class Builder {
    private int port;
    private Clock clock = Clock.systemUTC();
    private int eventHistoryLimit = 10_000;
    private int writeHistoryLimit = 1_000;
    private Duration bookmarkInterval = Duration.ofSeconds(5);
    private Duration clientReadTimeout = Duration.ofSeconds(10);
    private boolean servesDra;

    private Builder() {}

    /**
     * Serves {@code resource.k8s.io/v1} as kube-apiserver v1.37 with default gates: ResourceSlices
     * (field selectors {@code spec.nodeName}, {@code spec.driver}, {@code spec.pool.name}, {@code
     * metadata.name}), ResourceClaims ({@code status} only through {@code /status}, as {@code
     * pkg/registry/resource/resourceclaim/strategy.go}), DeviceClasses; no spec validation. Off by
     * default: {@code GET /apis/resource.k8s.io/v1} answers 404.
     *
     * @param on whether to serve the group
     */
    public Builder servingDra(boolean on) {
      this.servesDra = on;
      return this;
    }

    /**
     * @param port TCP port on 127.0.0.1; 0 (default) for an ephemeral port
     * @throws IllegalArgumentException if outside 0..65535
     */
    public Builder port(int port) {
      checkArgument(port >= 0 && port <= 65535, "port must be 0..65535: %s", port);
      this.port = port;
      return this;
    }

    /**
     * @param clock source of creationTimestamp, deletionTimestamp, condition times and history
     *     timestamps (second precision on the wire)
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * @param events how many write events are kept for watch resume; older resourceVersions get 410
     *     Expired; at least 1 (default 10 000)
     */
    public Builder eventHistoryLimit(int events) {
      checkArgument(events >= 1, "eventHistoryLimit must be at least 1: %s", events);
      this.eventHistoryLimit = events;
      return this;
    }

    /**
     * @param records how many {@link WriteRecord}s are kept per object; 0 disables the history
     *     (default 1 000)
     */
    public Builder writeHistoryLimit(int records) {
      checkArgument(records >= 0, "writeHistoryLimit must not be negative: %s", records);
      this.writeHistoryLimit = records;
      return this;
    }

    /**
     * @param interval period of BOOKMARK events on watches with {@code allowWatchBookmarks=true}
     *     (default 5 s); positive
     */
    public Builder bookmarkInterval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      checkArgument(
          !interval.isNegative() && !interval.isZero(),
          "bookmarkInterval must be positive: %s",
          interval);
      this.bookmarkInterval = interval;
      return this;
    }

    /**
     * @param timeout read timeout of {@link ApiServerEmulator#apiClient()} (default 10 s); positive
     */
    public Builder clientReadTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      checkArgument(
          !timeout.isNegative() && !timeout.isZero(),
          "clientReadTimeout must be positive: %s",
          timeout);
      this.clientReadTimeout = timeout;
      return this;
    }

    /**
     * @throws UncheckedIOException if the port cannot be bound
     */
    public ApiServerEmulator start() {
      try {
        return new ApiServerEmulator(this);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot bind 127.0.0.1:" + port, e);
      }
    }
  }
}
