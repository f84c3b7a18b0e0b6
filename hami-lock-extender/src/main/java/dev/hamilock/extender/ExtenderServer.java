package dev.hamilock.extender;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extender's HTTP(S) server with HAMi's routes ({@code pkg/scheduler/routes/route.go}, spec
 * §2.1) on Jetty 12: {@code POST /filter} and {@code /bind} (200 with the result, 400 when refused:
 * {@link RequestRejectedException}), {@code POST /preempt} (200, 400 refused, 500 a failed read;
 * 404 without {@link Builder#preemption}), {@code GET /healthz}, {@code /readyz} (503 {@code not
 * ready}) and {@code /metrics} (404 without a scrape).
 *
 * <p>Bounds are {@link ServingConfig}'s: {@code workThreads} threads and a queue as long (more:
 * 503); a waiting bind holds no thread. A filter/bind is answered 503 at {@code
 * --extender-http-timeout} after its headers arrived (a filter's worker interrupted, a bind's flow
 * runs on). Error bodies carry no class names ({@link CallerMessages}). With TLS it serves HTTPS
 * only, re-reading changed PEM files every second.
 */
public final class ExtenderServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);
  private static final String TEXT = Verbs.TEXT;

  /** How often the read deadlines are checked: 250 ms. */
  private static final Duration SWEEP = Duration.ofMillis(250);

  private final Server server;
  private final ServerConnector connector;
  private final ServerConnector healthConnector; // null: none
  private final ScheduledExecutorService timers =
      Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "hami-extender-timers"));
  private final ExtenderPreemption preemption; // null: no /preempt
  private final BooleanSupplier ready;
  private final Supplier<String> metricsText; // null: no /metrics
  private final ExtenderMetrics metrics;
  private final ServingConfig serving;
  private final ConnectionClock clock;
  private final Verbs verbs;

  private ExtenderServer(Builder b, SslContextFactory.Server ssl) {
    this.preemption = b.preemption;
    this.ready = b.ready;
    this.metricsText = b.metricsText;
    this.metrics = b.metrics != null ? b.metrics : ExtenderMetrics.inMemory();
    this.serving = b.config.serving();
    QueuedThreadPool io = new QueuedThreadPool(16, 4);
    io.setName("hami-extender-io");
    io.setDaemon(true);
    this.server = new Server(io);
    HttpConnectionFactory h1 = http();
    if (ssl != null) {
      h1.getHttpConfiguration().addCustomizer(new SecureRequestCustomizer(false));
      this.connector =
          new ServerConnector(server, 1, 1, new SslConnectionFactory(ssl, "http/1.1"), h1);
    } else {
      this.connector = new ServerConnector(server, 1, 1, h1);
    }
    this.clock =
        new ConnectionClock(serving.requestHeaderTimeout(), serving.requestBodyTimeout(), metrics);
    connector.addBean(clock);
    this.verbs = new Verbs(b.extender, preemption, b.config, metrics, clock, timers);
    connect(connector, b.config, b.config.port(), serving.maxConnections());
    // the probes' own connector: never waits for a slot of the work port
    this.healthConnector =
        serving.healthPort().isEmpty()
            ? null
            : connect(
                new ServerConnector(server, 1, 1, http()),
                b.config,
                serving.healthPort().getAsInt(),
                ServingConfig.HEALTH_MAX_CONNECTIONS);
    server.setErrorHandler(new PlainErrors());
    server.setHandler(
        new Handler.Abstract.NonBlocking() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            return ExtenderServer.this.handle(request, response, callback);
          }
        });
  }

  private static HttpConnectionFactory http() {
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setRequestHeaderSize(16 * 1024);
    return new HttpConnectionFactory(http);
  }

  private ServerConnector connect(ServerConnector c, ExtenderConfig config, int port, int max) {
    c.setHost(config.bindAddress());
    c.setPort(port);
    c.setIdleTimeout(Math.max(serving.requestHeaderTimeout().toMillis(), 1000));
    server.addConnector(c);
    server.addBean(new NetworkConnectionLimit(max, c));
    return c;
  }

  static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** A builder: always ready, no metrics export. */
  public static Builder builder(ExtenderConfig config, HamiExtender extender) {
    return new Builder(config, extender);
  }

  /** The bound address (the actual port when {@code --port=0}). */
  public InetSocketAddress address() {
    return new InetSocketAddress(connector.getHost(), connector.getLocalPort());
  }

  public int port() {
    return connector.getLocalPort();
  }

  /** The bound health port ({@link ServingConfig#healthPort()}), or empty without one. */
  public OptionalInt healthPort() {
    return healthConnector == null
        ? OptionalInt.empty()
        : OptionalInt.of(healthConnector.getLocalPort());
  }

  public ExtenderMetrics metrics() {
    return metrics;
  }

  /** Stops accepting, gives running exchanges up to 1 s, interrupts the workers. */
  @Override
  public void close() {
    try {
      server.setStopTimeout(1000);
      server.stop();
    } catch (Exception e) {
      LOG.debug("stopping the HTTP server: {}", e.toString());
    }
    verbs.close();
    timers.shutdownNow();
  }

  /** The connections currently tracked (for tests). */
  int trackedConnections() {
    return clock.open();
  }

  private boolean handle(Request request, Response response, Callback callback) {
    String path = Request.getPathInContext(request);
    String method = request.getMethod();
    Connection conn = request.getConnectionMetaData().getConnection();
    Callback done = Callback.from(callback, () -> clock.exchangeDone(conn));
    boolean verb = path.equals("/filter") || path.equals("/bind") || path.equals("/preempt");
    boolean probe =
        path.equals("/healthz")
            || path.equals("/readyz")
            || (path.equals("/metrics") && metricsText != null);
    String allowed = verb ? "POST" : "GET";
    if (!probe
        && !(verb
            && request.getConnectionMetaData().getConnector() != healthConnector
            && (preemption != null || !path.equals("/preempt")))) {
      verbs.reject(
          response, done, 404, "not_found", "404 page not found: " + CallerMessages.safe(path));
    } else if (!method.equals(allowed)) {
      response.getHeaders().put(HttpHeader.ALLOW, allowed);
      String m = CallerMessages.safe(method);
      verbs.reject(
          response,
          done,
          405,
          "method_not_allowed",
          "method " + m + " not allowed; use " + allowed);
    } else if (verb) {
      verbs.serve(path.substring(1), request, response, done, conn);
    } else {
      probe(path, response, done);
    }
    return true;
  }

  /** {@code /healthz}, {@code /readyz} and {@code /metrics}, answered on the I/O thread. */
  private void probe(String path, Response response, Callback done) {
    boolean readyz = path.equals("/readyz");
    int status = 200;
    String type = TEXT;
    String body = "ok";
    try {
      if (readyz && !ready.getAsBoolean()) {
        status = 503;
        body = "not ready";
      } else if (path.equals("/metrics")) {
        body = metricsText.get();
        type = "text/plain; version=0.0.4; charset=utf-8";
      }
    } catch (RuntimeException e) {
      LOG.warn(readyz ? "readiness check failed" : "metrics scrape failed", e);
      status = readyz ? 503 : 500;
      body = readyz ? "not ready" : "metrics scrape failed";
    }
    Verbs.send(response, done, status, type, body);
  }

  /** Jetty's own error answers (e.g. a bad request line) as {@code <status> <reason phrase>}. */
  static final class PlainErrors extends ErrorHandler {
    @Override
    protected void generateResponse(
        Request request,
        Response response,
        int code,
        String message,
        Throwable cause,
        Callback cb) {
      LOG.debug("answering {} for {}: {}", code, request.getHttpURI().getPath(), message);
      Verbs.send(response, cb, code, TEXT, code + " " + HttpStatus.getMessage(code));
    }
  }

  /** Options of the server; {@link #start()} binds. Not thread-safe. */
  public static final class Builder {
    private final ExtenderConfig config;
    private final HamiExtender extender;
    private BooleanSupplier ready = () -> true;
    private Supplier<String> metricsText;
    private ExtenderMetrics metrics;
    private ExtenderPreemption preemption;

    private Builder(ExtenderConfig config, HamiExtender extender) {
      this.config = Objects.requireNonNull(config, "config");
      this.extender = Objects.requireNonNull(extender, "extender");
    }

    /** Readiness for {@code /readyz} (e.g. caches and lock watches synced), asked per request. */
    public Builder ready(BooleanSupplier v) {
      this.ready = Objects.requireNonNull(v, "ready");
      return this;
    }

    /** The server's meters and the {@code /metrics} text (e.g. a Prometheus registry's scrape). */
    public Builder metrics(ExtenderMetrics v, Supplier<String> scrape) {
      this.metrics = Objects.requireNonNull(v, "metrics");
      this.metricsText = Objects.requireNonNull(scrape, "scrape");
      return this;
    }

    /** The handler of {@code POST /preempt} ({@code preemptVerb: preempt}); else it is 404. */
    public Builder preemption(ExtenderPreemption v) {
      this.preemption = Objects.requireNonNull(v, "preemption");
      return this;
    }

    /**
     * @throws IOException if the address cannot be bound or the TLS files cannot be read
     */
    public ExtenderServer start() throws IOException {
      ServingConfig s = config.serving();
      String at = config.bindAddress() + ":" + config.port();
      PemFiles.Tls tls =
          s.tls()
              ? new PemFiles.Tls(
                  s.tlsCertFile().get(), s.tlsPrivateKeyFile().get(), s.clientCaFile())
              : null;
      ExtenderServer srv = new ExtenderServer(this, tls == null ? null : tls.factory());
      try {
        srv.server.start();
      } catch (Exception e) {
        srv.close();
        throw e instanceof IOException io
            ? io
            : new IOException(
                "cannot start the extender's HTTP server on " + at + ": " + e.getMessage(), e);
      }
      long sweep = SWEEP.toMillis();
      srv.timers.scheduleWithFixedDelay(srv.clock::sweep, sweep, sweep, TimeUnit.MILLISECONDS);
      if (tls != null) {
        srv.timers.scheduleWithFixedDelay(tls::reloadIfChanged, 1, 1, TimeUnit.SECONDS);
      }
      String health = srv.healthPort().isPresent() ? ", health probes on http://%s:%d" : "";
      LOG.info(
          "scheduler extender listening on {}://{}:{}{} ({})",
          s.tls() ? "https" : "http",
          config.bindAddress(),
          srv.port(),
          health.formatted(config.bindAddress(), srv.healthPort().orElse(0)),
          String.join(" ", config.toArgs()));
      return srv;
    }
  }
}
