package dev.hamilock.extender;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.ExtenderJsonException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP server for {@link HamiExtender}, with HAMi's routes
 * ({@code pkg/scheduler/routes/route.go}, spec §2.1), on the JDK's {@code com.sun.net.httpserver}:
 *
 * <table>
 *   <caption>Routes</caption>
 *   <tr><th>route</th><th>body</th><th>answer</th></tr>
 *   <tr><td>{@code POST /filter}</td><td>{@code ExtenderArgs}</td><td>200 {@code ExtenderFilterResult}
 *       (errors in {@code Error})</td></tr>
 *   <tr><td>{@code POST /bind}</td><td>{@code ExtenderBindingArgs}</td><td>200
 *       {@code ExtenderBindingResult} (errors in {@code Error})</td></tr>
 *   <tr><td>{@code GET /healthz}</td><td></td><td>200 {@code ok}</td></tr>
 *   <tr><td>{@code GET /readyz}</td><td></td><td>200 {@code ok}, or 503 {@code not ready} while
 *       the readiness check is false</td></tr>
 * </table>
 *
 * <p>Malformed requests get a plain-text error: an empty body or unparsable JSON 400 (naming the
 * field or parser position), a body over {@link #MAX_BODY_BYTES} 413, a wrong method 405, an
 * unknown path 404; an unexpected internal failure 500. Responses are
 * {@code application/json} for the verbs. TCP_NODELAY is on ({@code sun.net.httpserver.nodelay}).
 * Requests run on a fixed pool of daemon threads, so gang members' binds can wait for a node
 * lock concurrently.
 */
public final class ExtenderServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);

  /** Largest accepted request body: 32 MiB (a full NodeList of a large cluster). */
  public static final int MAX_BODY_BYTES = 32 << 20;
  /** Default number of request threads. */
  public static final int DEFAULT_THREADS = 32;

  private final HttpServer server;
  private final ExecutorService executor;
  private final HamiExtender extender;
  private final BooleanSupplier ready;

  private ExtenderServer(HttpServer server, ExecutorService executor, HamiExtender extender,
      BooleanSupplier ready) {
    this.server = server;
    this.executor = executor;
    this.extender = extender;
    this.ready = ready;
  }

  /**
   * Starts the server on {@link ExtenderConfig#bindAddress()}:{@link ExtenderConfig#port()},
   * always ready, with {@link #DEFAULT_THREADS} threads.
   *
   * @param config the configuration (already validated: a config object that exists satisfies
   *     the refuse-to-start rule)
   * @param extender the handlers
   * @return the running server
   * @throws IOException if the port cannot be bound
   */
  public static ExtenderServer start(ExtenderConfig config, HamiExtender extender) throws IOException {
    return start(config, extender, () -> true, DEFAULT_THREADS);
  }

  /**
   * Starts the server.
   *
   * @param config the configuration
   * @param extender the handlers
   * @param ready readiness for {@code /readyz} (e.g. "caches synced"); evaluated per request
   * @param threads request threads (&ge; 1)
   * @return the running server
   * @throws IOException if the port cannot be bound
   * @throws IllegalArgumentException if {@code threads} &lt; 1
   */
  public static ExtenderServer start(ExtenderConfig config, HamiExtender extender,
      BooleanSupplier ready, int threads) throws IOException {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(extender, "extender");
    Objects.requireNonNull(ready, "ready");
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be at least 1: " + threads);
    }
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    HttpServer http = HttpServer.create(new InetSocketAddress(config.bindAddress(), config.port()), 0);
    AtomicInteger n = new AtomicInteger();
    ThreadFactory tf = r -> {
      Thread t = new Thread(r, "hami-extender-http-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
    ExecutorService pool = Executors.newFixedThreadPool(threads, tf);
    ExtenderServer s = new ExtenderServer(http, pool, extender, ready);
    http.setExecutor(pool);
    http.createContext("/", s::handle);
    http.start();
    LOG.info("scheduler extender listening on {} ({})", s.address(), String.join(" ", config.toArgs()));
    return s;
  }

  /** @return the bound address (the actual port when {@code --port=0}) */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** @return the bound port */
  public int port() {
    return server.getAddress().getPort();
  }

  /** Stops accepting requests, waits up to 1 s for running exchanges, and stops the threads. */
  @Override
  public void close() {
    server.stop(1);
    executor.shutdownNow();
    try {
      executor.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void handle(HttpExchange ex) {
    try {
      route(ex);
    } catch (ExtenderJsonException e) {
      LOG.debug("bad extender request: {}", e.getMessage());
      quietly(ex, 400, e.getMessage());
    } catch (IOException e) {
      LOG.debug("extender exchange failed: {}", e.getMessage());
    } catch (RuntimeException e) {
      LOG.error("extender request {} {} failed unexpectedly", ex.getRequestMethod(),
          ex.getRequestURI(), e);
      quietly(ex, 500, "internal error: " + e);
    } finally {
      ex.close();
    }
  }

  private void route(HttpExchange ex) throws IOException, ExtenderJsonException {
    String path = ex.getRequestURI().getPath();
    String method = ex.getRequestMethod();
    switch (path) {
      case "/filter" -> {
        if (requireMethod(ex, method, "POST")) {
          byte[] body = body(ex);
          if (body != null) {
            ExtenderArgs args = ExtenderJson.decodeArgs(body);
            json(ex, ExtenderJson.encode(extender.filter(args)));
          }
        }
      }
      case "/bind" -> {
        if (requireMethod(ex, method, "POST")) {
          byte[] body = body(ex);
          if (body != null) {
            ExtenderBindingArgs args = ExtenderJson.decodeBindingArgs(body);
            json(ex, ExtenderJson.encode(extender.bind(args)));
          }
        }
      }
      case "/healthz" -> {
        if (requireMethod(ex, method, "GET")) {
          text(ex, 200, "ok");
        }
      }
      case "/readyz" -> {
        if (requireMethod(ex, method, "GET")) {
          boolean ok = ready.getAsBoolean();
          text(ex, ok ? 200 : 503, ok ? "ok" : "not ready");
        }
      }
      default -> text(ex, 404, "404 page not found: " + path);
    }
  }

  private static boolean requireMethod(HttpExchange ex, String method, String allowed)
      throws IOException {
    if (method.equals(allowed)) {
      return true;
    }
    ex.getResponseHeaders().set("Allow", allowed);
    text(ex, 405, "method " + method + " not allowed; use " + allowed);
    return false;
  }

  /** @return the body, or null after answering 400/413 */
  private static byte[] body(HttpExchange ex) throws IOException {
    byte[] b;
    try (InputStream in = ex.getRequestBody()) {
      b = in.readNBytes(MAX_BODY_BYTES + 1);
    }
    if (b.length > MAX_BODY_BYTES) {
      text(ex, 413, "request body larger than " + MAX_BODY_BYTES + " bytes");
      return null;
    }
    if (b.length == 0) {
      text(ex, 400, "Please send a request body"); // HAMi routes.checkBody
      return null;
    }
    return b;
  }

  private static void json(HttpExchange ex, String body) throws IOException {
    send(ex, 200, "application/json", body);
  }

  private static void text(HttpExchange ex, int status, String body) throws IOException {
    send(ex, status, "text/plain; charset=utf-8", body);
  }

  private static void send(HttpExchange ex, int status, String type, String body)
      throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  private static void quietly(HttpExchange ex, int status, String message) {
    try {
      text(ex, status, message);
    } catch (IOException | RuntimeException e) {
      LOG.debug("could not send HTTP {} ({}): {}", status, message, e.toString());
    }
  }
}
