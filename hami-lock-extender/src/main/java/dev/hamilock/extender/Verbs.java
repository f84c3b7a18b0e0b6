package dev.hamilock.extender;

import static java.util.stream.Collectors.toMap;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.GoDuration;
import dev.hamilock.extender.v1.ExtenderBindingResult;
import dev.hamilock.extender.v1.ExtenderFilterResult;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.ExtenderJsonException;
import dev.hamilock.extender.v1.ExtenderPreemptionArgs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ExtenderServer}'s verbs: the bounded body read, the work queue, the per-request deadline
 * and the answers.
 */
final class Verbs {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);
  static final String TEXT = "text/plain; charset=utf-8";

  private final HamiExtender extender;
  private final ExtenderPreemption preemption; // null: no /preempt
  private final ServingConfig serving;
  private final Duration deadline;
  private final ExtenderMetrics metrics;
  private final ConnectionClock clock;
  private final ScheduledExecutorService timers;
  private final ThreadPoolExecutor work;
  private final ThreadPoolExecutor bindSteps;

  Verbs(
      HamiExtender extender,
      ExtenderPreemption preemption,
      ExtenderConfig config,
      ExtenderMetrics metrics,
      ConnectionClock clock,
      ScheduledExecutorService timers) {
    this.extender = extender;
    this.preemption = preemption;
    this.serving = config.serving();
    this.deadline = config.schedulerFlags().extenderHttpTimeout();
    this.metrics = metrics;
    this.clock = clock;
    this.timers = timers;
    int n = serving.workThreads();
    this.work = pool(n, new ArrayBlockingQueue<>(n), "hami-extender-work-");
    // a bind admitted by the work queue never has a step refused: its steps queue here, unbounded
    this.bindSteps = pool(n, new LinkedBlockingQueue<>(), "hami-extender-bind-");
    bindSteps.allowCoreThreadTimeOut(true);
  }

  private static ThreadPoolExecutor pool(int n, BlockingQueue<Runnable> queue, String prefix) {
    AtomicInteger count = new AtomicInteger();
    return new ThreadPoolExecutor(
        n,
        n,
        60,
        TimeUnit.SECONDS,
        queue,
        r -> ExtenderServer.daemon(r, prefix + count.incrementAndGet()));
  }

  /** Interrupts the workers; waits up to 5 s for them. */
  void close() {
    work.shutdownNow();
    bindSteps.shutdownNow();
    try {
      work.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Answers {@code POST /<verb>} ({@code filter}, {@code bind} or {@code preempt}). */
  void serve(String verb, Request request, Response response, Callback done, Connection conn) {
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
          "too many request bytes in flight (over --max-in-flight-body-bytes="
              + serving.maxInFlightBodyBytes()
              + "); retry later");
      return;
    }
    metrics.inFlight().incrementAndGet();
    AtomicBoolean released = new AtomicBoolean();
    Callback finished =
        Callback.from(
            done,
            () -> {
              if (released.compareAndSet(false, true)) {
                inFlightBytes.addAndGet(-reserve);
                metrics.inFlight().decrementAndGet();
              }
            });
    if (length == 0) { // HAMi routes.checkBody
      reject(response, finished, 400, "bad_request", "Please send a request body");
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
              } else if (bytes.length == 0) {
                reject(response, finished, 400, "bad_request", "Please send a request body");
              } else {
                clock.working(conn);
                dispatch(verb, bytes, response, finished, started, request.getHeadersNanoTime());
              }
            }));
  }

  /** Answers an unreadable body, closing: 413 if too large, 408 if timed out, else the parser's. */
  private void bodyFailed(
      String verb, Throwable failure, Response response, Callback finished, long started) {
    response.getHeaders().put(HttpHeader.CONNECTION, "close");
    int status = HttpStatus.BAD_REQUEST_400;
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof IllegalArgumentException
          || c instanceof ArithmeticException
          || (c.getMessage() != null && c.getMessage().toLowerCase(Locale.ROOT).contains("max"))) {
        reject(
            response,
            finished,
            413,
            "body_too_large",
            "request body larger than --max-request-body-bytes=" + serving.maxRequestBodyBytes());
        return;
      }
    }
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof HttpException h && h.getCode() >= 400) {
        status = h.getCode();
        break;
      }
      if (c instanceof TimeoutException) {
        status = HttpStatus.REQUEST_TIMEOUT_408;
        break;
      }
    }
    LOG.debug("reading a {} body failed: {}", verb, failure.toString());
    metrics.request(verb, "failed", Duration.ofNanos(System.nanoTime() - started));
    String reason = status + " " + HttpStatus.getMessage(status);
    reject(response, finished, status, "body_failed", "request body not received: " + reason);
  }

  /** Runs the verb on a work thread and answers it, or answers 503 at its deadline. */
  private void dispatch(
      String verb, byte[] body, Response response, Callback finished, long started, long headers) {
    AtomicBoolean answered = new AtomicBoolean();
    AtomicReference<ScheduledFuture<?>> timer = new AtomicReference<>();
    Consumer<Answer> answer =
        a -> {
          if (answered.compareAndSet(false, true)) {
            ScheduledFuture<?> t = timer.get();
            if (t != null) {
              t.cancel(false);
            }
            metrics.request(verb, a.outcome, Duration.ofNanos(System.nanoTime() - started));
            if (a.rejectReason != null) {
              metrics.rejected(a.rejectReason);
            }
            send(response, finished, a.status, a.type, a.body);
          }
        };
    Future<?> f;
    try {
      f = work.submit(() -> work(verb, body).thenAccept(answer));
    } catch (RejectedExecutionException e) {
      response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
      reject(response, finished, 503, "busy", busy());
      return;
    }
    Runnable expire =
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
            send(response, finished, 503, "application/json", errorBody(verb, msg));
          }
        };
    long left = deadline.toNanos() - (System.nanoTime() - headers);
    timer.set(timers.schedule(expire, Math.max(left, 0), TimeUnit.NANOSECONDS));
    if (answered.get()) {
      timer.get().cancel(false);
    }
  }

  private String busy() {
    return "all " + serving.workThreads() + " work threads and their queue are busy; retry later";
  }

  private record Answer(int status, String type, String body, String outcome, String rejectReason) {
    /** 200 with a verb's result; the outcome {@code error} when its {@code Error} is set. */
    static Answer ok(String json, String error) {
      return new Answer(200, "application/json", json, error.isEmpty() ? "ok" : "error", null);
    }
  }

  /** A filter's or bind's result with only {@code Error} set. */
  private static String errorBody(String verb, String error) {
    return verb.equals("filter")
        ? ExtenderJson.encode(ExtenderFilterResult.ofError(error))
        : ExtenderJson.encode(new ExtenderBindingResult(error));
  }

  /** The verb's answer: a filter's at once, a bind's when its flow ends (no thread held). */
  private CompletableFuture<Answer> work(String verb, byte[] body) {
    Answer a;
    try {
      if (verb.equals("preempt")) {
        return CompletableFuture.completedFuture(preempt(ExtenderJson.decodePreemptionArgs(body)));
      }
      if (verb.equals("filter")) {
        ExtenderFilterResult r = extender.filterChecked(ExtenderJson.decodeArgs(body));
        return CompletableFuture.completedFuture(
            Answer.ok(ExtenderJson.encode(safe(r)), r.error()));
      }
      return extender
          .bindCheckedAsync(ExtenderJson.decodeBindingArgs(body), bindSteps)
          .handle(
              (r, e) -> {
                if (e != null) {
                  return failed(verb, e);
                }
                String error = CallerMessages.safe(r.error());
                return Answer.ok(ExtenderJson.encode(new ExtenderBindingResult(error)), r.error());
              });
    } catch (RequestRejectedException e) {
      String error = errorBody(verb, CallerMessages.safe(e.getMessage()));
      a = new Answer(400, "application/json", error, "rejected", e.reason());
    } catch (ExtenderJsonException e) {
      LOG.debug("bad {} request: {}", verb, e.getMessage());
      a = new Answer(400, TEXT, CallerMessages.safe(e.getMessage()), "rejected", "bad_request");
    } catch (RuntimeException e) {
      a = failed(verb, e);
    }
    return CompletableFuture.completedFuture(a);
  }

  /** 503 when a bind's step found every work thread busy, else 500 (logged). */
  private Answer failed(String verb, Throwable e) {
    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (c instanceof RejectedExecutionException) {
      return new Answer(503, TEXT, busy(), "busy", null);
    }
    LOG.error("{} request failed unexpectedly", verb, c);
    return new Answer(500, TEXT, "internal error", "failed", null);
  }

  /** 200 with the victims; 400 refused, 500 a failed read (the result has no Error field). */
  private Answer preempt(ExtenderPreemptionArgs args) {
    try {
      return Answer.ok(ExtenderJson.encode(preemption.preempt(args)), "");
    } catch (RequestRejectedException e) {
      return new Answer(400, TEXT, CallerMessages.safe(e.getMessage()), "rejected", e.reason());
    } catch (ClusterException e) {
      LOG.info("preempt failed: {}", CallerMessages.safe(e.getMessage()));
      return new Answer(500, TEXT, CallerMessages.safe(e.getMessage()), "error", null);
    }
  }

  /** The result with its {@code Error} and {@code FailedNodes} made {@link CallerMessages#safe}. */
  private static ExtenderFilterResult safe(ExtenderFilterResult r) {
    Optional<Map<String, String>> failed =
        r.failedNodes()
            .map(
                m ->
                    m.entrySet().stream()
                        .collect(toMap(Map.Entry::getKey, e -> CallerMessages.safe(e.getValue()))));
    return new ExtenderFilterResult(
        r.nodes(),
        r.nodeNames(),
        failed,
        r.failedAndUnresolvableNodes(),
        CallerMessages.safe(r.error()));
  }

  void reject(Response response, Callback cb, int status, String reason, String message) {
    metrics.rejected(reason);
    send(response, cb, status, TEXT, message);
  }

  static void send(Response response, Callback cb, int status, String type, String body) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, b.length);
    response.write(true, ByteBuffer.wrap(b), cb);
  }
}
