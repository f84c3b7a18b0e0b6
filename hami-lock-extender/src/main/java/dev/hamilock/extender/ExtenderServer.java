package dev.hamilock.extender;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.GoDuration;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderBindingResult;
import dev.hamilock.extender.v1.ExtenderFilterResult;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.ExtenderJsonException;
import dev.hamilock.extender.v1.ExtenderPreemptionArgs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.ssl.SslConnection;
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
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extender's HTTP(S) server, with HAMi's routes ({@code pkg/scheduler/routes/route.go}, spec
 * §2.1), on Jetty 12 ({@code jetty-server}, core API, no servlets):
 *
 * <table>
 *   <caption>Routes</caption>
 *   <tr><th>route</th><th>body</th><th>answer</th></tr>
 *   <tr><td>{@code POST /filter}</td><td>{@code ExtenderArgs}</td><td>200 {@code ExtenderFilterResult}
 *       (errors in {@code Error}); 400 with {@code Error} when refused for what it asks</td></tr>
 *   <tr><td>{@code POST /bind}</td><td>{@code ExtenderBindingArgs}</td><td>200
 *       {@code ExtenderBindingResult} (errors in {@code Error}); 400 when refused</td></tr>
 *   <tr><td>{@code POST /preempt}</td><td>{@code ExtenderPreemptionArgs}</td><td>200
 *       {@code ExtenderPreemptionResult} ({@link ExtenderPreemption}); 400 refused, 500 a failed
 *       read; 404 unless {@link Builder#preemption} was given</td></tr>
 *   <tr><td>{@code GET /healthz}</td><td></td><td>200 {@code ok}</td></tr>
 *   <tr><td>{@code GET /readyz}</td><td></td><td>200 {@code ok}, or 503 {@code not ready}</td></tr>
 *   <tr><td>{@code GET /metrics}</td><td></td><td>the Prometheus text of the given scrape
 *       function, 404 without one</td></tr>
 * </table>
 *
 * <p><b>Why Jetty and not the JDK's {@code com.sun.net.httpserver}.</b> The JDK server reads
 * request headers and bodies with blocking I/O on its executor's threads, has no per-phase read
 * timeouts and no connection limit, so 32 clients sending a byte a second took every thread and
 * {@code /healthz} stopped answering (issue 15 item 1). Jetty reads with non-blocking I/O (a slow
 * client holds no thread), bounds connections ({@link NetworkConnectionLimit}) and has a minimum
 * request data rate; this class adds whole-phase deadlines.
 *
 * <p><b>Bounds</b> ({@link ServingConfig}):
 *
 * <ul>
 *   <li>connections: at most {@code maxConnections} open; more wait in the accept backlog;
 *   <li>headers: a connection that has not sent a complete request head within {@code
 *       requestHeaderTimeout} of connecting (or of its previous response) is closed;
 *   <li>bodies: a body not complete within {@code requestBodyTimeout} closes the connection; a
 *       {@code Content-Length} over {@code maxRequestBodyBytes} is answered 413 at once, before
 *       reading (a chunked body is cut at the cap with 413); when the bytes of all bodies being
 *       read or worked on would pass {@code maxInFlightBodyBytes} the request gets 503 before its
 *       body is read;
 *   <li>probes: with {@link ServingConfig#healthPort()} a second, plain-HTTP connector answers
 *       {@code /healthz}, {@code /readyz} and {@code /metrics} (not the verbs) with its own
 *       connection bound, so callers holding every slot of the work port cannot starve the
 *       kubelet's probes;
 *   <li>work: filter and bind run on {@code workThreads} threads with a queue of as many again
 *       (more: 503); health, readiness and metrics are answered on Jetty's I/O threads, never
 *       queued behind them. An admitted bind hands its flow to up to {@code workThreads} bind-step
 *       threads (queue unbounded: an admitted bind's step is never refused) and frees its work
 *       thread; while it waits for a node lock it holds no thread at all and its HTTP exchange
 *       stays open without one (Jetty 12's callback completes it; issue 25 item 3), so filters are
 *       not queued behind waiting binds;
 *   <li>deadline: every filter/bind request ends within the extender HTTP timeout ({@code
 *       --extender-http-timeout}, kube-scheduler's {@code httpTimeout}) counted from the arrival of
 *       its headers: then it is answered 503 with an {@code Error}, and a filter's worker is
 *       interrupted so its cluster reads stop ({@link HamiExtender} reads through a reader that
 *       refuses to start a read on an interrupted thread); a bind's flow, holding no thread, runs
 *       on to its end (its lock wait ends within the retry timeout, below this deadline).
 * </ul>
 *
 * <p>Error bodies never carry Java class names or stack traces and long values are shortened
 * ({@link CallerMessages}); Jetty's own error answers too (a bad request line, a bad chunk size, a
 * body that stops arriving: {@code text/plain} {@code <status> <reason phrase>}, no HTML page).
 * With {@link ServingConfig#tls()} it serves HTTPS only: the PEM files are read at start and
 * re-read when their content changes (checked every second); with a client CA it requires a client
 * certificate signed by it.
 */
public final class ExtenderServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);

  /** Default number of work threads. */
  public static final int DEFAULT_THREADS = 32;

  /** How often the read deadlines and TLS files are checked: 250 ms. */
  static final Duration SWEEP = Duration.ofMillis(250);

  private final Server server;
  private final ServerConnector connector;
  private final ServerConnector healthConnector; // null: none
  private final ThreadPoolExecutor work;
  private final ThreadPoolExecutor bindSteps;
  private final ScheduledExecutorService timers;
  private final HamiExtender extender;
  private final ExtenderPreemption preemption; // null: no /preempt
  private final BooleanSupplier ready;
  private final Optional<Supplier<String>> metricsText;
  private final ExtenderMetrics metrics;
  private final ServingConfig serving;
  private final Duration deadline;
  private final ConnectionClock clock;

  private ExtenderServer(Builder b) {
    this.extender = b.extender;
    this.preemption = b.preemption;
    this.ready = b.ready;
    this.metricsText = Optional.ofNullable(b.metricsText);
    this.metrics = b.metrics != null ? b.metrics : ExtenderMetrics.inMemory();
    this.serving = b.config.serving();
    this.deadline = b.config.extenderHttpTimeout();
    this.work =
        new ThreadPoolExecutor(
            serving.workThreads(),
            serving.workThreads(),
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(serving.workThreads()),
            daemonThreads("hami-extender-work-"));
    // a bind admitted by the work queue never has a step refused: its steps queue here, unbounded
    this.bindSteps =
        new ThreadPoolExecutor(
            serving.workThreads(),
            serving.workThreads(),
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            daemonThreads("hami-extender-bind-"));
    bindSteps.allowCoreThreadTimeOut(true);
    this.timers =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "hami-extender-timers");
              t.setDaemon(true);
              return t;
            });
    QueuedThreadPool io = new QueuedThreadPool(16, 4);
    io.setName("hami-extender-io");
    io.setDaemon(true);
    this.server = new Server(io);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setRequestHeaderSize(16 * 1024);
    HttpConnectionFactory h1 = new HttpConnectionFactory(http);
    if (serving.tls()) {
      http.addCustomizer(new SecureRequestCustomizer(false));
      this.connector =
          new ServerConnector(server, 1, 1, new SslConnectionFactory(b.ssl, "http/1.1"), h1);
    } else {
      this.connector = new ServerConnector(server, 1, 1, h1);
    }
    connector.setHost(b.config.bindAddress());
    connector.setPort(b.config.port());
    connector.setIdleTimeout(Math.max(serving.requestHeaderTimeout().toMillis(), 1000));
    this.clock =
        new ConnectionClock(serving.requestHeaderTimeout(), serving.requestBodyTimeout(), metrics);
    connector.addBean(clock);
    server.addConnector(connector);
    server.addBean(new NetworkConnectionLimit(serving.maxConnections(), connector));
    if (serving.healthPort().isPresent()) {
      // the probes' own connector: never waits for a slot of the work port (issue 24 item 9)
      HttpConfiguration probes = new HttpConfiguration();
      probes.setSendServerVersion(false);
      probes.setRequestHeaderSize(16 * 1024);
      this.healthConnector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(probes));
      healthConnector.setHost(b.config.bindAddress());
      healthConnector.setPort(serving.healthPort().getAsInt());
      healthConnector.setIdleTimeout(connector.getIdleTimeout());
      server.addConnector(healthConnector);
      server.addBean(
          new NetworkConnectionLimit(ServingConfig.HEALTH_MAX_CONNECTIONS, healthConnector));
    } else {
      this.healthConnector = null;
    }
    server.setErrorHandler(new PlainErrors());
    server.setHandler(
        new Handler.Abstract.NonBlocking() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            return ExtenderServer.this.handle(request, response, callback);
          }
        });
  }

  /**
   * Starts the server on {@link ExtenderConfig#bindAddress()}:{@link ExtenderConfig#port()}, always
   * ready, no {@code /metrics}.
   *
   * @param config the configuration
   * @param extender the handlers
   * @return the running server
   * @throws IOException if the port cannot be bound or the TLS files cannot be used
   */
  public static ExtenderServer start(ExtenderConfig config, HamiExtender extender)
      throws IOException {
    return builder(config, extender).start();
  }

  /**
   * Starts the server.
   *
   * @param config the configuration ({@code threads} replaces its work threads)
   * @param extender the handlers
   * @param ready readiness for {@code /readyz}; evaluated per request
   * @param threads work threads (&ge; 1)
   * @return the running server
   * @throws IOException if the port cannot be bound
   * @throws IllegalArgumentException if {@code threads} &lt; 1
   */
  public static ExtenderServer start(
      ExtenderConfig config, HamiExtender extender, BooleanSupplier ready, int threads)
      throws IOException {
    checkArgument(threads >= 1, "threads must be at least 1: %s", threads);
    return builder(config, extender).ready(ready).workThreads(threads).start();
  }

  /**
   * @param config the configuration (address, port, HTTP timeout, {@link ServingConfig})
   * @param extender the handlers
   * @return a builder: always ready, no metrics export
   */
  public static Builder builder(ExtenderConfig config, HamiExtender extender) {
    return new Builder(config, extender);
  }

  /**
   * @return the bound address (the actual port when {@code --port=0})
   */
  public InetSocketAddress address() {
    return new InetSocketAddress(connector.getHost(), connector.getLocalPort());
  }

  /**
   * @return the bound port
   */
  public int port() {
    return connector.getLocalPort();
  }

  /**
   * @return the bound health port ({@link ServingConfig#healthPort()}), or empty without one
   */
  public java.util.OptionalInt healthPort() {
    return healthConnector == null
        ? java.util.OptionalInt.empty()
        : java.util.OptionalInt.of(healthConnector.getLocalPort());
  }

  /**
   * @return the meters of this server
   */
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
    work.shutdownNow();
    bindSteps.shutdownNow();
    timers.shutdownNow();
    try {
      work.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  // ---------------------------------------------------------------------------------------------

  private boolean handle(Request request, Response response, Callback callback) {
    String path = Request.getPathInContext(request);
    String method = request.getMethod();
    Connection conn = request.getConnectionMetaData().getConnection();
    Callback done = Callback.from(callback, () -> clock.exchangeDone(conn));
    switch (path) {
      case "/healthz" -> {
        if (allow(response, done, method, "GET")) {
          text(response, done, 200, "ok");
        }
      }
      case "/readyz" -> {
        if (allow(response, done, method, "GET")) {
          boolean ok;
          try {
            ok = ready.getAsBoolean();
          } catch (RuntimeException e) {
            LOG.warn("readiness check failed", e);
            ok = false;
          }
          text(response, done, ok ? 200 : 503, ok ? "ok" : "not ready");
        }
      }
      case "/metrics" -> {
        if (metricsText.isEmpty()) {
          reject(response, done, 404, "not_found", "404 page not found: /metrics");
        } else if (allow(response, done, method, "GET")) {
          String body;
          try {
            body = metricsText.get().get();
          } catch (RuntimeException e) {
            LOG.warn("metrics scrape failed", e);
            text(response, done, 500, "metrics scrape failed");
            return true;
          }
          send(response, done, 200, "text/plain; version=0.0.4; charset=utf-8", body);
        }
      }
      case "/filter", "/bind", "/preempt" -> {
        if (request.getConnectionMetaData().getConnector() == healthConnector
            || (preemption == null && path.equals("/preempt"))) {
          reject(response, done, 404, "not_found", "404 page not found: " + path);
        } else if (allow(response, done, method, "POST")) {
          verb(path.substring(1), request, response, done, conn);
        }
      }
      default ->
          reject(
              response, done, 404, "not_found", "404 page not found: " + CallerMessages.safe(path));
    }
    return true;
  }

  private void verb(
      String verb, Request request, Response response, Callback done, Connection conn) {
    long started = System.nanoTime();
    long max = serving.maxRequestBodyBytes();
    long length = request.getLength();
    if (length > max) {
      response.getHeaders().put(HttpHeader.CONNECTION, "close");
      reject(
          response,
          done,
          413,
          "body_too_large",
          "request body of " + length + " bytes is larger than --max-request-body-bytes=" + max);
      return;
    }
    long reserve = length >= 0 ? length : max;
    AtomicLong inFlightBytes = metrics.bodyBytes();
    if (inFlightBytes.addAndGet(reserve) > serving.maxInFlightBodyBytes()) {
      inFlightBytes.addAndGet(-reserve);
      response.getHeaders().put(HttpHeader.CONNECTION, "close");
      response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
      reject(
          response,
          done,
          503,
          "in_flight_bytes",
          "too many request bytes in flight (over "
              + "--max-in-flight-body-bytes="
              + serving.maxInFlightBodyBytes()
              + "); retry later");
      return;
    }
    metrics.inFlight().incrementAndGet();
    AtomicBoolean released = new AtomicBoolean();
    Runnable release =
        () -> {
          if (released.compareAndSet(false, true)) {
            inFlightBytes.addAndGet(-reserve);
            metrics.inFlight().decrementAndGet();
          }
        };
    Callback finished = Callback.from(done, release);
    if (length == 0) {
      reject(
          response,
          finished,
          400,
          "bad_request",
          "Please send a request body"); // HAMi routes.checkBody
      return;
    }
    clock.readingBody(conn);
    // BLOCKING like the deprecated CompletableFuture form: the completion may write the answer
    Content.Source.asByteArrayAsync(
        request,
        (int) Math.min(max, Integer.MAX_VALUE - 8),
        Promise.Invocable.from(
            InvocationType.BLOCKING,
            (bytes, failure) -> {
              if (failure != null) {
                bodyFailed(verb, failure, response, finished, started);
                return;
              }
              if (bytes.length == 0) {
                reject(response, finished, 400, "bad_request", "Please send a request body");
                return;
              }
              clock.working(conn);
              dispatch(verb, bytes, response, finished, started, request.getHeadersNanoTime());
            }));
  }

  /** A body read failure's status: the parser's (e.g. 400 for a bad chunk size), 408 timed out. */
  /**
   * Answers a request whose body could not be read: 413 if too large, else 408 or 400 (closing).
   */
  private void bodyFailed(
      String verb, Throwable failure, Response response, Callback finished, long started) {
    response.getHeaders().put(HttpHeader.CONNECTION, "close");
    if (isTooLarge(failure)) {
      reject(
          response,
          finished,
          413,
          "body_too_large",
          "request body larger than --max-request-body-bytes=" + serving.maxRequestBodyBytes());
      return;
    }
    LOG.debug("reading a {} body failed: {}", verb, failure.toString());
    metrics.request(verb, "failed", Duration.ofNanos(System.nanoTime() - started));
    int status = bodyFailureStatus(failure);
    reject(
        response,
        finished,
        status,
        "body_failed",
        "request body not received: " + status + " " + HttpStatus.getMessage(status));
  }

  private static int bodyFailureStatus(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof HttpException h && h.getCode() >= 400) {
        return h.getCode();
      }
      if (c instanceof java.util.concurrent.TimeoutException) {
        return HttpStatus.REQUEST_TIMEOUT_408;
      }
    }
    return HttpStatus.BAD_REQUEST_400;
  }

  private static boolean isTooLarge(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof IllegalArgumentException
          || c instanceof ArithmeticException
          || (c.getMessage() != null
              && c.getMessage().toLowerCase(java.util.Locale.ROOT).contains("max"))) {
        return true;
      }
    }
    return false;
  }

  private void dispatch(
      String verb,
      byte[] body,
      Response response,
      Callback finished,
      long started,
      long headersNanos) {
    AtomicBoolean answered = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<ScheduledFuture<?>> timerRef =
        new java.util.concurrent.atomic.AtomicReference<>();
    Future<?> f;
    try {
      f =
          work.submit(
              () ->
                  work(verb, body)
                      .thenAccept(
                          a -> {
                            if (answered.compareAndSet(false, true)) {
                              ScheduledFuture<?> t = timerRef.get();
                              if (t != null) {
                                t.cancel(false);
                              }
                              metrics.request(
                                  verb, a.outcome, Duration.ofNanos(System.nanoTime() - started));
                              if (a.rejectReason != null) {
                                metrics.rejected(a.rejectReason);
                              }
                              send(response, finished, a.status, a.type, a.body);
                            }
                          }));
    } catch (RejectedExecutionException e) {
      response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
      reject(
          response,
          finished,
          503,
          "busy",
          "all " + serving.workThreads() + " work threads and their queue are busy; retry later");
      return;
    }
    long left = deadline.toNanos() - (System.nanoTime() - headersNanos);
    ScheduledFuture<?> timer =
        timers.schedule(
            () -> {
              if (answered.compareAndSet(false, true)) {
                f.cancel(true);
                metrics.request(verb, "deadline", Duration.ofNanos(System.nanoTime() - started));
                String msg =
                    verb
                        + " request passed its deadline of "
                        + GoDuration.format(deadline)
                        + " (--extender-http-timeout); its work was stopped";
                LOG.warn("{}", msg);
                send(
                    response,
                    finished,
                    503,
                    "application/json",
                    verb.equals("filter")
                        ? ExtenderJson.encode(ExtenderFilterResult.ofError(msg))
                        : ExtenderJson.encode(new ExtenderBindingResult(msg)));
              }
            },
            Math.max(left, 0),
            TimeUnit.NANOSECONDS);
    timerRef.set(timer);
    if (answered.get()) {
      timer.cancel(false);
    }
  }

  private record Answer(int status, String type, String body, String outcome, String rejectReason) {
    static Answer json(int status, String body, String outcome, String rejectReason) {
      return new Answer(status, "application/json", body, outcome, rejectReason);
    }
  }

  /**
   * The verb's answer: a filter's at once, a bind's when its flow ends, the bind holding no thread
   * while it waits for a node lock (issue 25 item 3: its steps are tasks on the work threads).
   */
  private CompletableFuture<Answer> work(String verb, byte[] body) {
    try {
      if (verb.equals("preempt")) {
        return CompletableFuture.completedFuture(preempt(ExtenderJson.decodePreemptionArgs(body)));
      }
      if (verb.equals("filter")) {
        ExtenderArgs args = ExtenderJson.decodeArgs(body);
        try {
          ExtenderFilterResult r = extender.filterChecked(args);
          return CompletableFuture.completedFuture(
              Answer.json(
                  200, ExtenderJson.encode(safe(r)), r.error().isEmpty() ? "ok" : "error", null));
        } catch (RequestRejectedException e) {
          return CompletableFuture.completedFuture(
              Answer.json(
                  400,
                  ExtenderJson.encode(
                      ExtenderFilterResult.ofError(CallerMessages.safe(e.getMessage()))),
                  "rejected",
                  e.reason()));
        }
      }
      ExtenderBindingArgs args = ExtenderJson.decodeBindingArgs(body);
      try {
        return extender
            .bindCheckedAsync(args, bindSteps)
            .handle(
                (r, e) ->
                    e != null
                        ? failed(verb, e)
                        : Answer.json(
                            200,
                            ExtenderJson.encode(
                                r.error().isEmpty()
                                    ? r
                                    : new ExtenderBindingResult(CallerMessages.safe(r.error()))),
                            r.error().isEmpty() ? "ok" : "error",
                            null));
      } catch (RequestRejectedException e) {
        return CompletableFuture.completedFuture(
            Answer.json(
                400,
                ExtenderJson.encode(new ExtenderBindingResult(CallerMessages.safe(e.getMessage()))),
                "rejected",
                e.reason()));
      }
    } catch (ExtenderJsonException e) {
      LOG.debug("bad {} request: {}", verb, e.getMessage());
      return CompletableFuture.completedFuture(
          new Answer(
              400,
              "text/plain; charset=utf-8",
              CallerMessages.safe(e.getMessage()),
              "rejected",
              "bad_request"));
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(failed(verb, e));
    }
  }

  /** 503 when a bind's step found every work thread busy, else 500 (logged). */
  private Answer failed(String verb, Throwable e) {
    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (c instanceof RejectedExecutionException) {
      return new Answer(
          503,
          "text/plain; charset=utf-8",
          "all " + serving.workThreads() + " work threads and their queue are busy; retry later",
          "busy",
          null);
    }
    LOG.error("{} request failed unexpectedly", verb, c);
    return new Answer(500, "text/plain; charset=utf-8", "internal error", "failed", null);
  }

  /** 200 with the victims; 400 refused, 500 a failed read (the result has no Error field). */
  private Answer preempt(ExtenderPreemptionArgs args) {
    try {
      return Answer.json(200, ExtenderJson.encode(preemption.preempt(args)), "ok", null);
    } catch (RequestRejectedException e) {
      return new Answer(
          400,
          "text/plain; charset=utf-8",
          CallerMessages.safe(e.getMessage()),
          "rejected",
          e.reason());
    } catch (ClusterException e) {
      LOG.info("preempt failed: {}", CallerMessages.safe(e.getMessage()));
      return new Answer(
          500, "text/plain; charset=utf-8", CallerMessages.safe(e.getMessage()), "error", null);
    }
  }

  private static ExtenderFilterResult safe(ExtenderFilterResult r) {
    if (r.error().isEmpty() && r.failedNodes().isEmpty()) {
      return r;
    }
    Optional<Map<String, String>> failed =
        r.failedNodes()
            .map(
                m -> {
                  Map<String, String> c = new java.util.LinkedHashMap<>();
                  m.forEach((k, v) -> c.put(k, CallerMessages.safe(v)));
                  return c;
                });
    return new ExtenderFilterResult(
        r.nodes(),
        r.nodeNames(),
        failed,
        r.failedAndUnresolvableNodes(),
        CallerMessages.safe(r.error()));
  }

  private boolean allow(Response response, Callback cb, String method, String allowed) {
    if (method.equals(allowed)) {
      return true;
    }
    response.getHeaders().put(HttpHeader.ALLOW, allowed);
    reject(
        response,
        cb,
        405,
        "method_not_allowed",
        "method " + CallerMessages.safe(method) + " not allowed; use " + allowed);
    return false;
  }

  private void reject(Response response, Callback cb, int status, String reason, String message) {
    metrics.rejected(reason);
    text(response, cb, status, message);
  }

  private static void text(Response response, Callback cb, int status, String body) {
    send(response, cb, status, "text/plain; charset=utf-8", body);
  }

  private static void send(Response response, Callback cb, int status, String type, String body) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, b.length);
    response.write(true, ByteBuffer.wrap(b), cb);
  }

  /**
   * Jetty's own error answers (a bad request line, a bad chunk size, a failed exchange) in the
   * extender's plain-text shape: {@code <status> <reason phrase>}, never Jetty's HTML page with the
   * exception's class name and message (issue 24 item 9).
   */
  static final class PlainErrors extends ErrorHandler {
    @Override
    protected void generateResponse(
        Request request,
        Response response,
        int code,
        String message,
        Throwable cause,
        Callback callback) {
      LOG.debug("answering {} for {}: {}", code, request.getHttpURI().getPath(), message);
      text(response, callback, code, code + " " + HttpStatus.getMessage(code));
    }
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Per-connection read deadlines: header phase from open / previous response, body phase from the
   * handler's first read; none while the request is worked on. A sweep closes connections past
   * their deadline.
   */
  static final class ConnectionClock implements Connection.Listener {
    private final long headerNanos;
    private final long bodyNanos;
    private final ExtenderMetrics metrics;
    private final Map<Connection, long[]> deadlines =
        new ConcurrentHashMap<>(); // [deadline, phase]
    private static final long HEADER = 0;
    private static final long BODY = 1;
    private static final long WORK = 2;

    ConnectionClock(Duration header, Duration body, ExtenderMetrics metrics) {
      this.headerNanos = header.toNanos();
      this.bodyNanos = body.toNanos();
      this.metrics = metrics;
    }

    @Override
    public void onOpened(Connection c) {
      if (!(c instanceof SslConnection)) {
        deadlines.put(c, new long[] {System.nanoTime() + headerNanos, HEADER});
      }
    }

    @Override
    public void onClosed(Connection c) {
      deadlines.remove(c);
    }

    void readingBody(Connection c) {
      set(c, System.nanoTime() + bodyNanos, BODY);
    }

    void working(Connection c) {
      set(c, Long.MAX_VALUE, WORK);
    }

    void exchangeDone(Connection c) {
      set(c, System.nanoTime() + headerNanos, HEADER);
    }

    private void set(Connection c, long deadline, long phase) {
      deadlines.computeIfPresent(c, (k, v) -> new long[] {deadline, phase});
    }

    int open() {
      return deadlines.size();
    }

    void sweep() {
      long now = System.nanoTime();
      for (Map.Entry<Connection, long[]> e : deadlines.entrySet()) {
        long[] d = e.getValue();
        if (d[0] != Long.MAX_VALUE && now - d[0] > 0) {
          if (deadlines.remove(e.getKey(), d)) {
            metrics.rejected(d[1] == BODY ? "body_timeout" : "header_timeout");
            LOG.debug(
                "closing a connection that did not send its request {} in time",
                d[1] == BODY ? "body" : "head");
            e.getKey().getEndPoint().close();
          }
        }
      }
    }
  }

  /** Options of the server; {@link #start()} binds. Not thread-safe. */
  public static final class Builder {
    private ExtenderConfig config;
    private final HamiExtender extender;
    private BooleanSupplier ready = () -> true;
    private Supplier<String> metricsText;
    private ExtenderMetrics metrics;
    private SslContextFactory.Server ssl;
    private ExtenderPreemption preemption;

    private Builder(ExtenderConfig config, HamiExtender extender) {
      this.config = Objects.requireNonNull(config, "config");
      this.extender = Objects.requireNonNull(extender, "extender");
    }

    /**
     * @param v readiness for {@code /readyz} (e.g. caches and lock watches synced)
     * @return this
     */
    public Builder ready(BooleanSupplier v) {
      this.ready = Objects.requireNonNull(v, "ready");
      return this;
    }

    /**
     * @param threads work threads, overriding {@link ServingConfig#workThreads()}
     * @return this
     */
    public Builder workThreads(int threads) {
      ServingConfig s = config.serving();
      this.config =
          config.withServing(
              new ServingConfig(
                  s.maxConnections(),
                  s.requestHeaderTimeout(),
                  s.requestBodyTimeout(),
                  s.maxRequestBodyBytes(),
                  s.maxInFlightBodyBytes(),
                  s.maxFilterNodes(),
                  threads,
                  s.schedulerNames(),
                  s.tlsCertFile(),
                  s.tlsPrivateKeyFile(),
                  s.clientCaFile(),
                  s.healthPort()));
      return this;
    }

    /**
     * @param v the server's meters (e.g. on a Prometheus registry)
     * @param scrape the {@code /metrics} text (e.g. {@code PrometheusMeterRegistry::scrape})
     * @return this
     */
    public Builder metrics(ExtenderMetrics v, Supplier<String> scrape) {
      this.metrics = Objects.requireNonNull(v, "metrics");
      this.metricsText = Objects.requireNonNull(scrape, "scrape");
      return this;
    }

    /**
     * @param v the handler of {@code POST /preempt} (kube-scheduler's {@code preemptVerb:
     *     preempt}); without it the route answers 404
     * @return this
     */
    public Builder preemption(ExtenderPreemption v) {
      this.preemption = Objects.requireNonNull(v, "preemption");
      return this;
    }

    /**
     * Binds and starts.
     *
     * @return the running server
     * @throws IOException if the address cannot be bound or the TLS files cannot be read
     */
    public ExtenderServer start() throws IOException {
      ServingConfig s = config.serving();
      TlsFiles tls = null;
      if (s.tls()) {
        tls = new TlsFiles(s.tlsCertFile().get(), s.tlsPrivateKeyFile().get(), s.clientCaFile());
        ssl = tls.factory();
      }
      ExtenderServer srv = new ExtenderServer(this);
      try {
        srv.server.start();
      } catch (IOException e) {
        srv.close();
        throw e;
      } catch (Exception e) {
        srv.close();
        throw new IOException(
            "cannot start the extender's HTTP server on "
                + config.bindAddress()
                + ":"
                + config.port()
                + ": "
                + e.getMessage(),
            e);
      }
      srv.timers.scheduleWithFixedDelay(
          srv.clock::sweep, SWEEP.toMillis(), SWEEP.toMillis(), TimeUnit.MILLISECONDS);
      if (tls != null) {
        TlsFiles t = tls;
        srv.timers.scheduleWithFixedDelay(t::reloadIfChanged, 1, 1, TimeUnit.SECONDS);
      }
      LOG.info(
          "scheduler extender listening on {}://{}:{}{} ({})",
          s.tls() ? "https" : "http",
          config.bindAddress(),
          srv.port(),
          srv.healthPort().isPresent()
              ? ", health probes on http://"
                  + config.bindAddress()
                  + ":"
                  + srv.healthPort().getAsInt()
              : "",
          String.join(" ", config.toArgs()));
      return srv;
    }
  }

  /** The PEM files behind HTTPS and their reload. */
  static final class TlsFiles {
    private final Path cert;
    private final Path key;
    private final Optional<Path> ca;
    private final SslContextFactory.Server factory = new SslContextFactory.Server();
    private byte[] digest;

    TlsFiles(Path cert, Path key, Optional<Path> ca) throws IOException {
      this.cert = cert;
      this.key = key;
      this.ca = ca;
      try {
        factory.setKeyStore(PemFiles.servingKeyStore(cert, key));
        factory.setKeyStorePassword(new String(PemFiles.PASSWORD));
        factory.setKeyManagerPassword(new String(PemFiles.PASSWORD));
        if (ca.isPresent()) {
          factory.setTrustStore(PemFiles.trustStore(ca.get()));
          factory.setNeedClientAuth(true);
        }
        factory.setIncludeProtocols("TLSv1.3", "TLSv1.2");
        digest = digest();
      } catch (java.security.GeneralSecurityException e) {
        throw new IOException(
            "cannot use --tls-cert-file "
                + cert
                + " / --tls-private-key-file "
                + key
                + ca.map(c -> " / --client-ca-file " + c).orElse("")
                + ": "
                + e.getMessage(),
            e);
      }
    }

    SslContextFactory.Server factory() {
      return factory;
    }

    private byte[] digest() throws IOException {
      try {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        md.update(Files.readAllBytes(cert));
        md.update(Files.readAllBytes(key));
        if (ca.isPresent()) {
          md.update(Files.readAllBytes(ca.get()));
        }
        return md.digest();
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }

    void reloadIfChanged() {
      try {
        byte[] now = digest();
        if (java.util.Arrays.equals(now, digest)) {
          return;
        }
        KeyStore ks = PemFiles.servingKeyStore(cert, key);
        KeyStore ts = ca.isPresent() ? PemFiles.trustStore(ca.get()) : null;
        factory.reload(
            f -> {
              f.setKeyStore(ks);
              if (ts != null) {
                f.setTrustStore(ts);
              }
            });
        digest = now;
        LOG.info("reloaded the TLS files {} {}{}", cert, key, ca.map(c -> " " + c).orElse(""));
      } catch (Exception e) {
        LOG.warn(
            "TLS files changed but cannot be used yet (keeping the previous ones): {}",
            e.getMessage());
      }
    }
  }

  /**
   * @return the connections currently tracked (for tests)
   */
  int trackedConnections() {
    return clock.open();
  }

  static List<String> routes() {
    return new ArrayList<>(List.of("/filter", "/bind", "/healthz", "/readyz", "/metrics"));
  }
}
