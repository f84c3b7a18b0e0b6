package dev.hamilock.k8s.watch;

import dev.hamilock.core.WaitClock;
import dev.hamilock.core.annotation.AbstractNodeLockWatch;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Core's {@link AbstractNodeLockWatch} (protocol and lifecycle documented there) over client-java's
 * raw HTTP ({@link KubeWatchTransport}): one watch of all Nodes per client, LIST pages with the
 * request timeout, the stream without read timeout ({@link #close()} cancels the call). Call {@link
 * #releaseSignal(String)} for every key before {@link #start()}.
 */
public final class NodeLockWatch extends AbstractNodeLockWatch {

  private static final AtomicInteger THREADS = new AtomicInteger();

  private NodeLockWatch(Builder b) {
    super(
        new KubeWatchTransport(new KubeHttp(b.apiClient, b.watchApiClient, b.requestTimeout)),
        b.threadFactory,
        b.time,
        b.watchTimeout);
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
