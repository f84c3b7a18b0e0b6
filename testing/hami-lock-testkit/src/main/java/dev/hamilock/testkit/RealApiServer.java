package dev.hamilock.testkit;

import static dev.hamilock.testkit.Checks.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real kube-apiserver on a real etcd: the {@code realcluster} launcher built from the Go modules
 * in {@code testing/realcluster} (k8s.io/kubernetes and go.etcd.io/etcd/server/v3, versions in its
 * go.mod) by {@code testing/realcluster/build}. Both servers run in one child process on 127.0.0.1
 * with all their state in one temporary directory, which {@link #close()} checks is gone.
 *
 * <p>The binary is {@code -Dhamilock.realcluster.bin} (default {@value #DEFAULT_BINARY}, relative
 * to the repository root holding {@code testing/realcluster/go.mod}); unless it was built from the
 * current go.mod and sources, {@link RealApiServerException} says to run {@code
 * testing/realcluster/build}.
 *
 * <p>Request counters come from {@code /metrics} ({@code apiserver_request_total}) minus a {@link
 * #resetCounters()} baseline and this class's own seeding requests. The server has background
 * traffic (leases, ServiceAccount controller, loopback informers): compare specific verbs and
 * resources, not {@link #totalRequests()}. A watch is counted when it ends.
 *
 * <p>With {@link Builder#apiserverChild(boolean)}, {@link #killApiServer()} and {@link
 * #startApiServer(Duration)} restart kube-apiserver on the same port and etcd; its metrics restart
 * from zero, so call {@link #resetCounters()} after a restart.
 */
public final class RealApiServer implements KubeBackend {
  /** System property naming the launcher binary. */
  public static final String BINARY_PROPERTY = "hamilock.realcluster.bin";

  /** Default binary, relative to the repository root. */
  public static final String DEFAULT_BINARY = "testing/realcluster/bin/realcluster";

  static final String GO_MOD = "testing/realcluster/go.mod";
  static final String BUILD_HINT = "run testing/realcluster/build from the repository root";

  private static final Logger LOG = LoggerFactory.getLogger(RealApiServer.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final MediaType JSON = MediaType.get("application/json");
  private static final Pattern VERSION_LINE =
      Pattern.compile("realcluster kubernetes (\\S+) etcd (\\S+)");
  private static final Pattern METRIC_LINE =
      Pattern.compile("^apiserver_request_total\\{(.*)} (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern DURATION_LINE =
      Pattern.compile("^apiserver_request_duration_seconds_(sum|count)\\{(.*)} (\\S+)$");

  private final Process process;
  private final Path dir;
  private final Path kubeconfig;
  private final URI etcd;
  private final String kubernetesVersion;
  private final Deque<String> stderrTail;
  private final Duration clientReadTimeout;
  private final List<ApiClient> clients = new CopyOnWriteArrayList<>();
  private final ApiClient helper;
  private final String basePath;
  private final HttpClient etcdHttp =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<RequestKey, Long> baseline = new HashMap<>();
  private final Map<RequestKey, Long> helperCounts = new HashMap<>();
  private final ChildLines childLines;
  private ApiClient apiClient;
  private ApiClient watchApiClient;
  private boolean closed;

  /**
   * The launcher's {@code apiserver-*} lines (only with {@link Builder#apiserverChild(boolean)}).
   */
  static final class ChildLines {
    private volatile long pid = -1;
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    void line(String line) {
      if (line.startsWith("apiserver-pid ")) {
        pid = Long.parseLong(line.substring("apiserver-pid ".length()).trim());
      } else {
        if (line.startsWith("apiserver-exited")) {
          pid = -1;
        }
        events.add(line);
      }
    }

    String await(String prefix, Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      for (; ; ) {
        String e = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (e == null) {
          return null;
        }
        if (e.startsWith(prefix)) {
          return e;
        }
      }
    }
  }

  private RealApiServer(
      Process process,
      Path dir,
      Path kubeconfig,
      URI etcd,
      String kubernetesVersion,
      Deque<String> stderrTail,
      Duration clientReadTimeout,
      ChildLines childLines) {
    this.childLines = childLines;
    this.process = process;
    this.dir = dir;
    this.kubeconfig = kubeconfig;
    this.etcd = etcd;
    this.kubernetesVersion = kubernetesVersion;
    this.stderrTail = stderrTail;
    this.clientReadTimeout = clientReadTimeout;
    this.helper = newApiClient(Duration.ofSeconds(30));
    this.basePath = helper.getBasePath();
  }

  /**
   * @throws RealApiServerException if the binary is missing or stale, or the server does not become
   *     ready (the child is then stopped and its temporary directory removed)
   */
  public static RealApiServer start() {
    return builder().start();
  }

  /**
   * @return a builder (startup timeout 180 s, client read timeout 10 s, free ports)
   */
  public static Builder builder() {
    return new Builder();
  }

  // --------------------------------------------------------------- locating the binary

  /**
   * @param from a directory to start from
   * @return the first directory at or above {@code from} holding {@value #GO_MOD}, if any
   */
  static Optional<Path> repositoryRoot(Path from) {
    for (Path p = from.toAbsolutePath().normalize(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve(GO_MOD))) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  static Optional<Path> goOnPath(String path) {
    if (path == null) {
      return Optional.empty();
    }
    for (String d : path.split(File.pathSeparator)) {
      if (d.isEmpty()) {
        continue;
      }
      Path go = Path.of(d, "go");
      if (Files.isExecutable(go)) {
        return Optional.of(go);
      }
    }
    return Optional.empty();
  }

  static String goHint() {
    return goHint(System.getenv("PATH"));
  }

  static String goHint(String path) {
    return goOnPath(path)
        .map(go -> "Go is at " + go)
        .orElse(
            "Go is not on the PATH: install Go 1.26 first (your distribution's package, or as "
                + "https://go.dev/doc/install describes), then run testing/realcluster/build");
  }

  /**
   * @return the version of k8s.io/kubernetes that {@code goMod} requires
   */
  static Optional<String> requiredKubernetes(Path goMod) throws IOException {
    Matcher m =
        Pattern.compile("(?m)^\\s*(?:require\\s+)?k8s\\.io/kubernetes\\s+(v\\S+)")
            .matcher(Files.readString(goMod));
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /**
   * @param configured a binary path; a relative one is resolved from {@code root}
   * @param root the repository root, if found (else the working directory)
   */
  static Path resolveBinary(Path configured, Optional<Path> root) {
    return configured.isAbsolute()
        ? configured
        : root.orElse(Path.of("").toAbsolutePath()).resolve(configured);
  }

  /**
   * @param bin a binary built from Go module {@code module}
   * @param module the module directory (its go.mod and go.sum count)
   * @param sources a directory whose {@code .go} files (recursively) count
   * @return the first of those files modified after {@code bin}, if any
   * @throws IOException if a modification time cannot be read
   */
  static Optional<Path> changedSource(Path bin, Path module, Path sources) throws IOException {
    long built = Files.getLastModifiedTime(bin).toMillis();
    List<Path> files = new ArrayList<>(List.of(module.resolve("go.mod"), module.resolve("go.sum")));
    if (Files.isDirectory(sources)) {
      try (Stream<Path> s = Files.walk(sources)) {
        s.filter(f -> f.toString().endsWith(".go")).sorted().forEach(files::add);
      }
    }
    for (Path f : files) {
      if (Files.isRegularFile(f) && Files.getLastModifiedTime(f).toMillis() > built) {
        return Optional.of(f);
      }
    }
    return Optional.empty();
  }

  /**
   * @return the checked binary and the Kubernetes version it reports
   */
  static Map.Entry<Path, String> checkBinary(Path configured, Optional<Path> root) {
    Path bin = resolveBinary(configured, root);
    if (!Files.isRegularFile(bin)) {
      throw new RealApiServerException(
          "no realcluster binary at "
              + bin
              + " (-D"
              + BINARY_PROPERTY
              + "): "
              + BUILD_HINT
              + " ("
              + goHint()
              + ")");
    }
    if (!Files.isExecutable(bin)) {
      throw new RealApiServerException(
          "realcluster binary " + bin + " is not executable: " + BUILD_HINT);
    }
    String line;
    try {
      Process p = new ProcessBuilder(bin.toString(), "--version").redirectErrorStream(true).start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new RealApiServerException(
            "realcluster binary " + bin + " did not answer --version within 20 s: " + BUILD_HINT);
      }
      line = new String(out, StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      throw new RealApiServerException(
          "cannot run " + bin + " --version (" + e.getMessage() + "): " + BUILD_HINT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RealApiServerException("interrupted while running " + bin + " --version", e);
    }
    Matcher m = VERSION_LINE.matcher(line);
    if (!m.find()) {
      throw new RealApiServerException(
          "stale or foreign realcluster binary "
              + bin
              + ": --version printed \""
              + line
              + "\", not \"realcluster kubernetes <version> etcd <version>\": "
              + BUILD_HINT);
    }
    String version = m.group(1);
    if (root.isPresent()) {
      Path module = root.get().resolve("testing/realcluster");
      try {
        Optional<String> required = requiredKubernetes(root.get().resolve(GO_MOD));
        if (required.isPresent() && !required.get().equals(version)) {
          throw new RealApiServerException(
              "stale realcluster binary "
                  + bin
                  + ": built from k8s.io/kubernetes "
                  + version
                  + " but "
                  + GO_MOD
                  + " requires "
                  + required.get()
                  + ": "
                  + BUILD_HINT);
        }
        Optional<Path> changed = changedSource(bin, module, module.resolve("cmd"));
        if (changed.isPresent()) {
          throw new RealApiServerException(
              "stale realcluster binary "
                  + bin
                  + ": "
                  + root.get().relativize(changed.get())
                  + " changed after the binary was built: "
                  + BUILD_HINT);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + module + ": " + e.getMessage(), e);
      }
    }
    return Map.entry(bin, version);
  }

  // --------------------------------------------------------------- start

  private static RealApiServer launch(Builder b) {
    Optional<Path> root = repositoryRoot(Path.of(System.getProperty("user.dir")));
    Path configured = Path.of(System.getProperty(BINARY_PROPERTY, DEFAULT_BINARY));
    Map.Entry<Path, String> checked = checkBinary(b.binary != null ? b.binary : configured, root);
    Path bin = checked.getKey();

    List<String> cmd =
        new ArrayList<>(
            List.of(
                bin.toString(),
                "--startup-timeout",
                (b.startupTimeout.toMillis() + 30_000) + "ms",
                "--secure-port",
                Integer.toString(b.securePort)));
    if (b.featureGates != null) {
      cmd.add("--feature-gates=" + b.featureGates);
    }
    if (b.runtimeConfig != null) {
      cmd.add("--runtime-config=" + b.runtimeConfig);
    }
    for (String a : b.apiserverArgs) {
      cmd.add("--apiserver-arg=" + a);
    }
    if (b.apiserverChild) {
      cmd.add("--apiserver-child");
    }
    b.schedulerConfigs.forEach(c -> cmd.add("--with-scheduler=" + c.toAbsolutePath()));
    Process p;
    try {
      p = new ProcessBuilder(cmd).start();
    } catch (IOException e) {
      throw new RealApiServerException(
          "cannot start " + bin + ": " + e.getMessage() + ": " + BUILD_HINT, e);
    }
    Deque<String> tail = new ArrayDeque<>();
    CompletableFuture<Path> dirF = new CompletableFuture<>();
    CompletableFuture<URI> etcdF = new CompletableFuture<>();
    CompletableFuture<Path> readyF = new CompletableFuture<>();
    ChildLines childLines = new ChildLines();
    Thread out =
        new Thread(
            () -> readStdout(p.getInputStream(), dirF, etcdF, readyF, childLines),
            "realcluster-stdout-" + p.pid());
    Thread err =
        new Thread(() -> readStderr(p.getErrorStream(), tail), "realcluster-stderr-" + p.pid());
    out.setDaemon(true);
    err.setDaemon(true);
    out.start();
    err.start();
    try {
      Path kubeconfig = readyF.get(b.startupTimeout.toMillis(), TimeUnit.MILLISECONDS);
      RealApiServer s =
          new RealApiServer(
              p,
              dirF.getNow(null),
              kubeconfig,
              etcdF.getNow(null),
              checked.getValue(),
              tail,
              b.clientReadTimeout,
              childLines);
      LOG.info(
          "real kube-apiserver {} ready (pid {}, dir {}, etcd {})",
          checked.getValue(),
          p.pid(),
          s.dir,
          s.etcd);
      return s;
    } catch (ExecutionException e) {
      // the child ended before "ready": its own clean-up ran; make sure and report its error line
      Path dir = dirF.getNow(null);
      waitFor(p, Duration.ofSeconds(30));
      String leftover = removeLeftover(dir);
      throw new RealApiServerException(
          "realcluster exited (code "
              + exitCode(p)
              + ") before it was ready: "
              + errorLine(tail)
              + leftover
              + "\nlast log lines:\n"
              + lastLines(tail, 25),
          e.getCause(),
          dir,
          p.pid());
    } catch (TimeoutException e) {
      Path dir = dirF.getNow(null);
      stopProcess(p);
      String leftover = removeLeftover(dir);
      throw new RealApiServerException(
          "realcluster was not ready within "
              + b.startupTimeout
              + " (raise it with RealApiServer.builder().startupTimeout(..) on a slow machine); it was stopped"
              + (dir == null ? "" : " and " + dir + " removed")
              + leftover
              + "\nlast log lines:\n"
              + lastLines(tail, 25),
          null,
          dir,
          p.pid());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopProcess(p);
      removeLeftover(dirF.getNow(null));
      throw new RealApiServerException("interrupted while waiting for realcluster to be ready", e);
    }
  }

  private static void readStdout(
      InputStream in,
      CompletableFuture<Path> dir,
      CompletableFuture<URI> etcd,
      CompletableFuture<Path> ready,
      ChildLines childLines) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("dir ")) {
          dir.complete(Path.of(line.substring(4)));
        } else if (line.startsWith("etcd ")) {
          etcd.complete(URI.create(line.substring(5)));
        } else if (line.startsWith("ready ")) {
          ready.complete(Path.of(line.substring(6)));
        } else if (line.startsWith("apiserver-")) {
          childLines.line(line);
        } else {
          LOG.warn("realcluster printed an unexpected line: {}", line);
        }
      }
    } catch (IOException e) {
      LOG.debug("realcluster stdout: {}", e.toString());
    }
    ready.completeExceptionally(new IOException("realcluster closed its standard output"));
  }

  private static void readStderr(InputStream in, Deque<String> tail) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        LOG.trace("realcluster: {}", line);
        synchronized (tail) {
          tail.addLast(line);
          if (tail.size() > 400) {
            tail.removeFirst();
          }
        }
      }
    } catch (IOException e) {
      LOG.debug("realcluster stderr: {}", e.toString());
    }
  }

  private static String errorLine(Deque<String> tail) {
    synchronized (tail) {
      List<String> lines = new ArrayList<>(tail);
      for (int i = lines.size() - 1; i >= 0; i--) {
        if (lines.get(i).startsWith("error: ")) {
          return lines.get(i).substring(7);
        }
      }
    }
    return "(no error line; see the log lines below)";
  }

  private static String lastLines(Deque<String> tail, int n) {
    synchronized (tail) {
      List<String> lines = new ArrayList<>(tail);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }
  }

  private static String exitCode(Process p) {
    return p.isAlive() ? "still running" : Integer.toString(p.exitValue());
  }

  private static boolean waitFor(Process p, Duration d) {
    try {
      return p.waitFor(d.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !p.isAlive();
    }
  }

  /** Closes stdin, then SIGTERM, then SIGKILL; returns how it ended. */
  private static String stopProcess(Process p) {
    try {
      p.getOutputStream().close();
    } catch (IOException e) {
      LOG.debug("closing realcluster stdin: {}", e.toString());
    }
    if (waitFor(p, Duration.ofSeconds(45))) {
      return "stopped when its standard input closed";
    }
    p.destroy();
    if (waitFor(p, Duration.ofSeconds(15))) {
      return "stopped by SIGTERM";
    }
    p.destroyForcibly();
    waitFor(p, Duration.ofSeconds(15));
    return "killed (SIGKILL)";
  }

  /** Removes {@code dir} if the child left it; returns a note for the error message. */
  private static String removeLeftover(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return "";
    }
    deleteTree(dir);
    return "; it left " + dir + " behind, removed it now";
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      LOG.warn("cannot remove {}: {}", dir, e.toString());
    }
  }

  // --------------------------------------------------------------- accessors and clients

  @Override
  public Kind kind() {
    return Kind.REAL;
  }

  /**
   * @return the admin kubeconfig the launcher wrote (inside {@link #directory()})
   */
  @Override
  public Path kubeconfigFile() {
    return kubeconfig;
  }

  /**
   * @return the temporary directory holding etcd's data, certificates and the kubeconfig
   */
  public Path directory() {
    return dir;
  }

  /**
   * @return the k8s.io/kubernetes module version the server was built from, e.g. {@code v1.37.2}
   */
  public String kubernetesVersion() {
    return kubernetesVersion;
  }

  /**
   * @return the API server's base URL, e.g. {@code https://127.0.0.1:41234}
   */
  public String url() {
    return basePath;
  }

  /**
   * @return the child's process id
   */
  public long pid() {
    return process.pid();
  }

  @Override
  public synchronized ApiClient apiClient() {
    if (apiClient == null) {
      apiClient = newApiClient(clientReadTimeout);
    }
    return apiClient;
  }

  @Override
  public synchronized ApiClient watchApiClient() {
    if (watchApiClient == null) {
      watchApiClient = newApiClient(Duration.ZERO);
    }
    return watchApiClient;
  }

  @Override
  public ApiClient newApiClient(Duration readTimeout) {
    Objects.requireNonNull(readTimeout, "readTimeout");
    checkArgument(!readTimeout.isNegative(), "readTimeout must not be negative: %s", readTimeout);
    try (Reader r = Files.newBufferedReader(kubeconfig)) {
      ApiClient c =
          ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(r))
              .setReadTimeout(readTimeout)
              .build();
      clients.add(c);
      return c;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot read the kubeconfig " + kubeconfig + ": " + e.getMessage(), e);
    }
  }

  // --------------------------------------------------------------- seeding over HTTP

  private static ResourceType type(String resource) {
    Objects.requireNonNull(resource, "resource");
    return ResourceType.lookup(resource)
        .filter(t -> !t.customResource())
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "unknown resource \""
                        + resource
                        + "\" for the real server; known: namespaces, nodes, pods, configmaps"));
  }

  private static String path(ResourceType t, String namespace, String name) {
    StringBuilder b =
        new StringBuilder(
            t.group().isEmpty() ? "/api/v1" : "/apis/" + t.group() + "/" + t.version());
    if (t.namespaced() && namespace != null) {
      b.append("/namespaces/").append(namespace);
    }
    b.append('/').append(t.plural());
    if (name != null) {
      b.append('/').append(name);
    }
    return b.toString();
  }

  private record Answer(int code, JsonNode body) {}

  private Answer call(String method, String path, JsonNode body, String verb, String resource) {
    synchronized (helperCounts) {
      helperCounts.merge(new RequestKey(verb, resource), 1L, Long::sum);
    }
    Request.Builder rb = new Request.Builder().url(basePath + path);
    if (body != null) {
      rb.method(method, RequestBody.create(body.toString(), JSON));
    } else {
      rb.method(method, null);
    }
    try (Response resp = helper.getHttpClient().newCall(rb.build()).execute()) {
      String text = resp.body().string();
      return new Answer(
          resp.code(), text.isEmpty() ? MAPPER.createObjectNode() : MAPPER.readTree(text));
    } catch (IOException e) {
      throw new UncheckedIOException(method + " " + path + " failed: " + e.getMessage(), e);
    }
  }

  private static IllegalStateException rejected(String what, Answer a) {
    return new IllegalStateException(
        "real kube-apiserver rejected "
            + what
            + " ("
            + a.code
            + " "
            + a.body.path("reason").asText()
            + "): "
            + a.body.path("message").asText(a.body.toString()));
  }

  private static ObjectNode toTree(Object object) {
    Objects.requireNonNull(object, "object");
    JsonNode n;
    try {
      if (object instanceof String s) {
        n = MAPPER.readTree(s);
      } else if (object instanceof JsonNode j) {
        n = j.deepCopy();
      } else {
        n = MAPPER.valueToTree(object);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("object is not valid JSON: " + e.getMessage(), e);
    }
    if (!(n instanceof ObjectNode o)) {
      throw new IllegalArgumentException("object must be a JSON object: " + object);
    }
    return o;
  }

  @Override
  public JsonNode create(Object object) {
    ObjectNode o = toTree(object);
    String apiVersion = o.path("apiVersion").asText("");
    String kind = o.path("kind").asText("");
    ResourceType t =
        ResourceType.byKind(apiVersion, kind)
            .filter(rt -> !rt.customResource())
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "unsupported apiVersion/kind for the real server: \""
                            + apiVersion
                            + "\"/\""
                            + kind
                            + "\""));
    String ns = t.namespaced() ? o.path("metadata").path("namespace").asText("default") : null;
    JsonNode status = o.get("status");
    Answer a = call("POST", path(t, ns, null), o, "create", t.plural());
    // The ServiceAccount admission plugin refuses pods until the launcher's ServiceAccount
    // controller has created the namespace's "default" account (milliseconds after the namespace).
    for (int i = 0;
        i < 100
            && t.plural().equals("pods")
            && a.code == 403
            && a.body.path("message").asText().contains("serviceaccount \"default\" not found");
        i++) {
      sleep(Duration.ofMillis(100));
      a = call("POST", path(t, ns, null), o, "create", t.plural());
    }
    if (a.code != 201 && a.code != 200) {
      throw rejected("the create of " + kind + " " + o.path("metadata").path("name").asText(), a);
    }
    if (status != null && t.hasStatus() && !status.isEmpty()) {
      ObjectNode withStatus = a.body.deepCopy();
      withStatus.set("status", status);
      String name = a.body.path("metadata").path("name").asText();
      Answer s =
          call("PUT", path(t, ns, name) + "/status", withStatus, "update", t.plural() + "/status");
      if (s.code != 200) {
        throw rejected("the status update of " + kind + " " + name, s);
      }
      return s.body;
    }
    return a.body;
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public Optional<JsonNode> get(String resource, String namespace, String name) {
    ResourceType t = type(resource);
    Answer a = call("GET", path(t, namespace, name), null, "get", t.plural());
    if (a.code == 404) {
      return Optional.empty();
    }
    if (a.code != 200) {
      throw rejected("the get of " + t.plural() + " " + name, a);
    }
    return Optional.of(a.body);
  }

  @Override
  public List<JsonNode> list(String resource, String namespace) {
    ResourceType t = type(resource);
    Answer a = call("GET", path(t, namespace, null), null, "list", t.plural());
    if (a.code != 200) {
      throw rejected("the list of " + t.plural(), a);
    }
    List<JsonNode> out = new ArrayList<>();
    a.body.path("items").forEach(out::add);
    return out;
  }

  @Override
  public JsonNode mutate(
      String resource, String namespace, String name, UnaryOperator<ObjectNode> mutation) {
    ResourceType t = type(resource);
    Objects.requireNonNull(mutation, "mutation");
    for (int attempt = 0; attempt < 20; attempt++) {
      JsonNode cur =
          get(resource, namespace, name)
              .orElseThrow(
                  () -> new IllegalStateException(t.plural() + " \"" + name + "\" not found"));
      ObjectNode next = mutation.apply((ObjectNode) cur.deepCopy());
      ((ObjectNode) next.path("metadata"))
          .put("resourceVersion", cur.path("metadata").path("resourceVersion").asText());
      Answer a = call("PUT", path(t, namespace, name), next, "update", t.plural());
      if (a.code == 409) {
        continue;
      }
      if (a.code != 200) {
        throw rejected("the update of " + t.plural() + " " + name, a);
      }
      JsonNode result = a.body;
      if (t.hasStatus() && !cur.path("status").equals(next.path("status"))) {
        ObjectNode withStatus = result.deepCopy();
        if (next.has("status")) {
          withStatus.set("status", next.get("status"));
        } else {
          withStatus.remove("status");
        }
        Answer s =
            call(
                "PUT",
                path(t, namespace, name) + "/status",
                withStatus,
                "update",
                t.plural() + "/status");
        if (s.code == 409) {
          continue;
        }
        if (s.code != 200) {
          throw rejected("the status update of " + t.plural() + " " + name, s);
        }
        result = s.body;
      }
      return result;
    }
    throw new IllegalStateException(
        "the update of " + t.plural() + " " + name + " met 20 conflicts in a row");
  }

  @Override
  public boolean delete(String resource, String namespace, String name) {
    ResourceType t = type(resource);
    Answer a = call("DELETE", path(t, namespace, name), null, "delete", t.plural());
    if (a.code == 404) {
      return false;
    }
    if (a.code != 200 && a.code != 202) {
      throw rejected("the delete of " + t.plural() + " " + name, a);
    }
    return true;
  }

  /**
   * Creates Kubernetes 1.37's gang, a {@code scheduling.k8s.io/v1beta1} PodGroup whose {@code
   * spec.schedulingPolicy.gang.minCount} is {@code minCount}, with the other {@code spec} fields
   * given, e.g. its {@code priorityClassName}, which kube-scheduler requires equal to its members'
   * ({@code pkg/scheduler/schedule_one_podgroup.go} validatePodGroup). The emulator serves no
   * PodGroups, so this is not part of {@link KubeBackend}.
   *
   * @param namespace the PodGroup's namespace; must exist
   * @param minCount members the gang needs; at least 1
   * @param spec further {@code spec} fields (JSON-shaped maps, lists and scalars); may be empty
   * @throws IllegalStateException naming the PodGroup and the server's answer when it is refused
   */
  public JsonNode createPodGroup(
      String namespace, String name, int minCount, Map<String, Object> spec) {
    ObjectNode body =
        toTree(
            Map.of(
                "apiVersion", "scheduling.k8s.io/v1beta1",
                "kind", "PodGroup",
                "metadata", Map.of("name", name, "namespace", namespace)));
    ObjectNode s = toTree(spec);
    s.set("schedulingPolicy", toTree(Map.of("gang", Map.of("minCount", minCount))));
    body.set("spec", s);
    String path = "/apis/scheduling.k8s.io/v1beta1/namespaces/" + namespace + "/podgroups";
    Answer a = call("POST", path, body, "create", "podgroups");
    if (a.code != 201 && a.code != 200) {
      throw rejected("the create of PodGroup " + namespace + "/" + name, a);
    }
    return a.body;
  }

  // --------------------------------------------------------------- metrics and etcd

  /** Kubernetes verbs for the verb label of apiserver_request_total. */
  static String verb(String metricVerb) {
    return switch (metricVerb) {
      case "POST" -> "create";
      case "PUT" -> "update";
      case "WATCHLIST" -> "watch";
      default -> metricVerb.toLowerCase(Locale.ROOT);
    };
  }

  /**
   * The verb and resource[/subresource] of one metric line's label set.
   *
   * @param labelText the text between the braces of a Prometheus sample
   * @return the key, or {@code null} for a non-resource URL (empty {@code resource} label)
   */
  private static RequestKey requestKey(String labelText) {
    Map<String, String> labels = new HashMap<>();
    Matcher l = LABEL.matcher(labelText);
    while (l.find()) {
      labels.put(l.group(1), l.group(2));
    }
    String resource = labels.getOrDefault("resource", "");
    if (resource.isEmpty()) {
      return null;
    }
    String sub = labels.getOrDefault("subresource", "");
    return new RequestKey(
        verb(labels.getOrDefault("verb", "")), sub.isEmpty() ? resource : resource + "/" + sub);
  }

  /**
   * Parses {@code apiserver_request_total} from a Prometheus text exposition, summed over codes and
   * the other labels; requests to non-resource URLs (empty resource) are left out.
   *
   * @param metrics the {@code /metrics} text
   * @return counts by verb and resource[/subresource]
   */
  static Map<RequestKey, Long> parseRequestTotals(String metrics) {
    Map<RequestKey, Long> out = new HashMap<>();
    for (String line : metrics.split("\n")) {
      Matcher m = METRIC_LINE.matcher(line);
      if (!m.matches()) {
        continue;
      }
      RequestKey key = requestKey(m.group(1));
      if (key == null) {
        continue;
      }
      out.merge(key, (long) Double.parseDouble(m.group(2)), Long::sum);
    }
    return out;
  }

  private Map<RequestKey, Long> scrape() {
    return parseRequestTotals(metricsText());
  }

  /**
   * Counters from the server's {@code /metrics} since start or {@link #resetCounters()}, without
   * the requests this class made itself.
   */
  @Override
  public Map<RequestKey, Long> requestCounts() {
    Map<RequestKey, Long> now = scrape();
    Map<RequestKey, Long> out = new TreeMap<>(Comparator.comparing(RequestKey::toString));
    synchronized (helperCounts) {
      now.forEach(
          (k, v) -> {
            long n = v - baseline.getOrDefault(k, 0L) - helperCounts.getOrDefault(k, 0L);
            if (n != 0) {
              out.put(k, n);
            }
          });
    }
    return out;
  }

  @Override
  public void resetCounters() {
    Map<RequestKey, Long> now = scrape();
    synchronized (helperCounts) {
      baseline.clear();
      baseline.putAll(now);
      helperCounts.clear();
    }
  }

  private JsonNode etcdPost(String path, String body) {
    HttpRequest r =
        HttpRequest.newBuilder(etcd.resolve(path))
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .header("Content-Type", "application/json")
            .build();
    try {
      HttpResponse<String> resp = etcdHttp.send(r, HttpResponse.BodyHandlers.ofString());
      if (resp.statusCode() != 200) {
        throw new IllegalStateException(
            "etcd " + path + " answered " + resp.statusCode() + ": " + resp.body());
      }
      return MAPPER.readTree(resp.body());
    } catch (IOException e) {
      throw new UncheckedIOException("etcd " + path + " failed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during etcd " + path, e);
    }
  }

  /**
   * @return etcd's current revision (from a one-key range request through the gateway)
   */
  public long etcdRevision() {
    String key = Base64.getEncoder().encodeToString("/".getBytes(StandardCharsets.UTF_8));
    return etcdPost("/v3/kv/range", "{\"key\":\"" + key + "\",\"limit\":1,\"keys_only\":true}")
        .path("header")
        .path("revision")
        .asLong();
  }

  /**
   * Compacts etcd at its current revision (physical compaction), through etcd's HTTP/JSON gRPC
   * gateway. Afterwards a watch the API server cannot serve from its watch cache, from an older
   * resourceVersion, gets 410 Gone.
   */
  public long compactEtcd() {
    long rev = etcdRevision();
    etcdPost("/v3/kv/compaction", "{\"revision\":\"" + rev + "\",\"physical\":true}");
    return rev;
  }

  @Override
  public long compact() {
    return compactEtcd();
  }

  /** The server's own time for one verb and resource: requests served and seconds spent. */
  public record RequestTime(long count, double seconds) {
    /**
     * @return mean milliseconds per request (0 without requests)
     */
    public double meanMillis() {
      return count == 0 ? 0 : seconds * 1000 / count;
    }

    /**
     * @param earlier an earlier reading of the same key
     * @return what happened between the two readings
     */
    public RequestTime minus(RequestTime earlier) {
      return new RequestTime(count - earlier.count, seconds - earlier.seconds);
    }
  }

  /**
   * Parses {@code apiserver_request_duration_seconds_sum} and {@code _count} from a Prometheus text
   * exposition, summed over the other labels (scope, component, dry_run, group, version);
   * non-resource URLs are left out.
   *
   * @param metrics the {@code /metrics} text
   * @return server time by verb and resource[/subresource]
   */
  static Map<RequestKey, RequestTime> parseRequestTimes(String metrics) {
    Map<RequestKey, long[]> counts = new HashMap<>();
    Map<RequestKey, double[]> sums = new HashMap<>();
    for (String line : metrics.split("\n")) {
      Matcher m = DURATION_LINE.matcher(line);
      if (!m.matches()) {
        continue;
      }
      RequestKey key = requestKey(m.group(2));
      if (key == null) {
        continue;
      }
      double v = Double.parseDouble(m.group(3));
      if (m.group(1).equals("sum")) {
        sums.computeIfAbsent(key, k -> new double[1])[0] += v;
      } else {
        counts.computeIfAbsent(key, k -> new long[1])[0] += (long) v;
      }
    }
    Map<RequestKey, RequestTime> out = new TreeMap<>(Comparator.comparing(RequestKey::toString));
    counts.forEach(
        (k, c) -> out.put(k, new RequestTime(c[0], sums.getOrDefault(k, new double[1])[0])));
    return out;
  }

  /**
   * @return the server's {@code /metrics} text (Prometheus exposition), e.g. for {@code
   *     apiserver_cache_list_fetched_objects_total} or {@code
   *     apiserver_watch_cache_consistent_read_total}
   */
  public String metrics() {
    return metricsText();
  }

  private String metricsText() {
    Request r = new Request.Builder().url(basePath + "/metrics").get().build();
    try (Response resp = helper.getHttpClient().newCall(r).execute()) {
      String text = resp.body().string();
      if (resp.code() != 200) {
        throw new IllegalStateException("GET /metrics answered " + resp.code() + ": " + text);
      }
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException("GET /metrics failed: " + e.getMessage(), e);
    }
  }

  /**
   * The server's time per verb and resource since it started (cumulative, including this class's
   * own requests and the server's background traffic); subtract an earlier reading with {@link
   * RequestTime#minus}.
   *
   * @return server time by verb and resource, from {@code apiserver_request_duration_seconds}
   */
  public Map<RequestKey, RequestTime> requestTimes() {
    return parseRequestTimes(metricsText());
  }

  /**
   * @return the kube-apiserver child's process id, while one runs (only with {@link
   *     Builder#apiserverChild(boolean)})
   */
  public OptionalLong apiserverPid() {
    long pid = childLines.pid;
    return pid > 0 ? OptionalLong.of(pid) : OptionalLong.empty();
  }

  /**
   * Kills the kube-apiserver child with SIGKILL (etcd keeps running) and waits until the launcher
   * reports its end.
   *
   * @return the launcher's {@code apiserver-exited <status>} line
   * @throws IllegalStateException if the server was not started with {@link
   *     Builder#apiserverChild(boolean)}, no child runs, or its end is not reported within 30 s
   */
  public String killApiServer() {
    long pid =
        apiserverPid()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "no kube-apiserver child runs (start with RealApiServer.builder().apiserverChild(true))"));
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    try {
      String line = childLines.await("apiserver-exited", Duration.ofSeconds(30));
      if (line == null) {
        throw new IllegalStateException(
            "the launcher did not report the end of kube-apiserver pid " + pid + " within 30 s");
      }
      return line;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing kube-apiserver pid " + pid, e);
    }
  }

  /**
   * Starts a new kube-apiserver child on the same port and etcd (after {@link #killApiServer()})
   * and waits for its {@code /readyz}.
   *
   * @param timeout how long to wait for readiness; positive
   * @return the new child's process id
   * @throws IllegalStateException if it is not ready in time
   */
  public synchronized long startApiServer(Duration timeout) {
    try {
      OutputStream in = process.getOutputStream();
      in.write("start-apiserver\n".getBytes(StandardCharsets.UTF_8));
      in.flush();
      String line = childLines.await("apiserver-ready", timeout);
      if (line == null) {
        throw new IllegalStateException(
            "the restarted kube-apiserver was not ready within "
                + timeout
                + "\nlast log lines:\n"
                + lastLines(stderrTail, 25));
      }
      return apiserverPid()
          .orElseThrow(
              () -> new IllegalStateException("the restarted kube-apiserver already ended"));
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot write to the launcher's standard input: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while restarting kube-apiserver", e);
    }
  }

  // --------------------------------------------------------------- stop

  /**
   * Stops the child (closing its standard input; SIGTERM after 45 s, SIGKILL after 15 s more),
   * releases the clients, and checks that the temporary directory is gone.
   *
   * @throws RealApiServerException if the child had to be killed or left its directory behind (the
   *     directory is removed before throwing)
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (ApiClient c : clients) {
      c.getHttpClient().dispatcher().executorService().shutdown();
      c.getHttpClient().connectionPool().evictAll();
    }
    clients.clear();
    String how = stopProcess(process);
    String leftover = removeLeftover(dir);
    int code = process.isAlive() ? -1 : process.exitValue();
    if (!leftover.isEmpty() || code != 0) {
      throw new RealApiServerException(
          "realcluster (pid "
              + process.pid()
              + ") "
              + how
              + ", exit code "
              + code
              + leftover
              + "\nlast log lines:\n"
              + lastLines(stderrTail, 25),
          null,
          dir,
          process.pid());
    }
    LOG.info("real kube-apiserver stopped (pid {}), {} removed", process.pid(), dir);
  }

  /** Writes nothing; closes the child's stdin (used by tests of the launcher's stop on EOF). */
  OutputStream stdin() {
    return process.getOutputStream();
  }

  Process process() {
    return process;
  }

  /** Configures a {@link RealApiServer}. */
  public static final class Builder {
    private Path binary;
    private final List<Path> schedulerConfigs = new ArrayList<>();
    private String featureGates;
    private String runtimeConfig;
    private int securePort;
    private Duration startupTimeout = Duration.ofSeconds(180);
    private Duration clientReadTimeout = Duration.ofSeconds(10);
    private final List<String> apiserverArgs = new ArrayList<>();
    private boolean apiserverChild;

    private Builder() {}

    /**
     * @param on run kube-apiserver in its own process (the launcher's {@code --apiserver-child}),
     *     so {@link RealApiServer#killApiServer()} and {@link
     *     RealApiServer#startApiServer(Duration)} can kill and restart it while etcd keeps running;
     *     default off (in-process)
     */
    public Builder apiserverChild(boolean on) {
      this.apiserverChild = on;
      return this;
    }

    /**
     * @param binary the launcher (default: {@code -Dhamilock.realcluster.bin} or {@value
     *     RealApiServer#DEFAULT_BINARY} from the repository root)
     */
    public Builder binary(Path binary) {
      this.binary = Objects.requireNonNull(binary, "binary");
      return this;
    }

    /**
     * @param gates kube-apiserver {@code --feature-gates}, e.g. {@code WatchList=true}
     */
    public Builder featureGates(String gates) {
      this.featureGates = Objects.requireNonNull(gates, "gates");
      return this;
    }

    /**
     * @param config kube-apiserver {@code --runtime-config}, e.g. {@code api/all=true}
     */
    public Builder runtimeConfig(String config) {
      this.runtimeConfig = Objects.requireNonNull(config, "config");
      return this;
    }

    /**
     * @param port secure port on 127.0.0.1, 0 (default) for a free one; 0..65535
     */
    public Builder securePort(int port) {
      checkArgument(port >= 0 && port <= 65_535, "securePort must be 0..65535: %s", port);
      this.securePort = port;
      return this;
    }

    /**
     * @param timeout how long to wait for the {@code ready} line; positive
     */
    public Builder startupTimeout(Duration timeout) {
      checkArgument(
          !timeout.isNegative() && !timeout.isZero(),
          "startupTimeout must be positive: %s",
          timeout);
      this.startupTimeout = timeout;
      return this;
    }

    /**
     * @param timeout read timeout of {@link RealApiServer#apiClient()}; not negative
     */
    public Builder clientReadTimeout(Duration timeout) {
      checkArgument(!timeout.isNegative(), "clientReadTimeout must not be negative: %s", timeout);
      this.clientReadTimeout = timeout;
      return this;
    }

    /**
     * @param arg an extra kube-apiserver flag, e.g. {@code --watch-cache=false}
     */
    public Builder apiserverArg(String arg) {
      apiserverArgs.add(Objects.requireNonNull(arg, "arg"));
      return this;
    }

    /**
     * Also runs kube-scheduler (v1.37's {@code cmd/kube-scheduler/app}, in the launcher's process,
     * against this server; {@link #featureGates} apply to it too): the launcher's {@code
     * --with-scheduler}. The server is ready once the scheduler has started. Called again, it runs
     * one more kube-scheduler per call, each in its own child process of the launcher (a second one
     * cannot share the process: configz is registered process-wide), with its own configuration,
     * e.g. its own {@code schedulerName} and extender (extenders are configured per scheduler, not
     * per profile); these set up after the server is ready.
     *
     * @param config a {@code KubeSchedulerConfiguration} file; its {@code
     *     clientConnection.kubeconfig} defaults to the server's admin kubeconfig
     * @throws IllegalArgumentException if the file does not exist
     */
    public Builder withScheduler(Path config) {
      checkArgument(
          Files.isRegularFile(Objects.requireNonNull(config, "config")),
          "no KubeSchedulerConfiguration file at %s",
          config);
      schedulerConfigs.add(config);
      return this;
    }

    /**
     * @throws RealApiServerException as {@link RealApiServer#start()}
     */
    public RealApiServer start() {
      return launch(this);
    }
  }
}
