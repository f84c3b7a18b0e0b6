package dev.hamilock.k8s.watch;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.Gson;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.annotation.AbstractNodeLockWatch;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Response;
import okio.BufferedSource;

/**
 * Core's {@link AbstractNodeLockWatch} (protocol and lifecycle documented there) over client-java's
 * raw HTTP: one watch of all Nodes per client, LIST pages with the request timeout, the stream
 * without read timeout ({@link #close()} cancels the call). Call {@link #releaseSignal(String)} for
 * every key before {@link #start()}.
 */
public final class NodeLockWatch extends AbstractNodeLockWatch {

  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final Gson GSON = new Gson();

  private final KubeHttp http;

  private NodeLockWatch(Builder b) {
    super(b.threadFactory, b.time, b.watchTimeout);
    this.http = new KubeHttp(b.apiClient, b.watchApiClient, b.requestTimeout);
  }

  /**
   * A builder (request timeout 10 s, watch timeout 5 min, daemon thread {@code
   * hami-lock-node-watch-N}) on {@code apiClient}, whose credentials the watch reuses.
   *
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  @Override
  public NodeLockWatch start() {
    super.start();
    return this;
  }

  @Override
  protected Page listPage(String continueToken) throws Exception {
    List<Pair> q = new ArrayList<>(List.of(new Pair("limit", "500")));
    if (continueToken != null) {
      q.add(new Pair("continue", continueToken));
    }
    return page(parseObject(new String(http.getBody("/api/v1/nodes", q), UTF_8)));
  }

  @Override
  protected LineStream open(String resourceVersion, long timeoutSeconds) throws ApiException {
    List<Pair> q =
        List.of(
            new Pair("watch", "true"),
            new Pair("resourceVersion", resourceVersion),
            new Pair("allowWatchBookmarks", "true"),
            new Pair("timeoutSeconds", Long.toString(timeoutSeconds)));
    Call call = http.watchCall("/api/v1/nodes", q);
    Response response;
    try {
      response = call.execute();
    } catch (java.io.IOException e) {
      throw new ApiException(e);
    }
    if (!response.isSuccessful() || response.body() == null) {
      try (response) {
        String body = response.body() == null ? "" : response.body().string();
        throw new ApiException(response.code(), response.headers().toMultimap(), body);
      } catch (java.io.IOException e) {
        throw new ApiException(e);
      }
    }
    BufferedSource source = response.body().source();
    return new LineStream() {
      @Override
      public String readLine() throws java.io.IOException {
        return source.readUtf8Line();
      }

      @Override
      public void cancel() {
        call.cancel(); // never response.close() here: it would drain the body beside the reader
      }

      @Override
      public void close() {
        response.close(); // on the watch thread, which reads it
      }
    };
  }

  @Override
  protected Map<?, ?> parseObject(String json) {
    return GSON.fromJson(json, Map.class);
  }

  @Override
  protected boolean isGone(Exception failure) {
    return failure instanceof ApiException e && e.getCode() == 410;
  }

  /** Builder for {@link NodeLockWatch}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final ApiClient apiClient;
    private ApiClient watchApiClient;
    private Duration requestTimeout = Duration.ofSeconds(10);
    private WaitClock time = WaitClock.SYSTEM;
    private Duration watchTimeout = Duration.ofMinutes(5);
    private ThreadFactory threadFactory =
        r -> {
          Thread t = new Thread(r, "hami-lock-node-watch-" + THREADS.incrementAndGet());
          t.setDaemon(true);
          return t;
        };

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    /** The client whose HTTP settings the watch uses, without read timeout (default: the main). */
    public Builder watchApiClient(ApiClient watchApiClient) {
      this.watchApiClient = watchApiClient;
      return this;
    }

    /** Whole-call timeout of each LIST page (default 10 s); positive. */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /** Server-side {@code timeoutSeconds} of one stream, +≤10 % jitter (default 5 min); ≥ 1 s. */
    public Builder watchTimeout(Duration watchTimeout) {
      this.watchTimeout = watchTimeout;
      return this;
    }

    /** Makes the one watch thread (default: daemon threads). */
    public Builder threadFactory(ThreadFactory threadFactory) {
      this.threadFactory = threadFactory;
      return this;
    }

    /** The random source of the reconnect back-off's and {@code timeoutSeconds}' jitter. */
    public Builder waitClock(WaitClock time) {
      this.time = time;
      return this;
    }

    /**
     * @return the watch, not started
     * @throws IllegalArgumentException naming the setting if a timeout is invalid or the thread
     *     factory is null
     */
    public NodeLockWatch build() {
      Validation.positive("requestTimeout", requestTimeout);
      Validation.positive("watchTimeout", watchTimeout);
      return new NodeLockWatch(this);
    }
  }
}
