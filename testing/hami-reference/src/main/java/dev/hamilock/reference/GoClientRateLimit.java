package dev.hamilock.reference;

import static com.google.common.base.Preconditions.checkArgument;

import io.kubernetes.client.openapi.ApiClient;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.function.LongSupplier;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * client-go's client-side rate limit, which HAMi's scheduler runs with: every request of a client
 * first takes a token from one token bucket ({@code flowcontrol.NewTokenBucketRateLimiter} over
 * {@code golang.org/x/time/rate}: starts full with {@code burst} tokens, refills at {@code qps} per
 * second, a request that finds none waits for its reserved token, waiters in arrival order). HAMi's
 * {@code cmd/scheduler/main.go} sets it from {@code --kube-qps} (default {@link
 * #HAMI_SCHEDULER_QPS}) and {@code --kube-burst} (default {@link #HAMI_SCHEDULER_BURST}) through
 * {@code pkg/util/client}; HAMi's chart sets neither flag, so a default installation locks nodes
 * through a 5 QPS / burst 10 client.
 *
 * <p>hami-reference's other classes send unthrottled; {@link #install} adds the limit to an {@link
 * ApiClient} (all calls through it, as all calls through HAMi's one global client share one
 * bucket). Found by running HAMi v2.10.0's own Go code beside hami-reference on a real API server:
 * the lock algorithm matched, the deployed client did not (issue 18).
 */
public final class GoClientRateLimit implements Interceptor {
  /** HAMi scheduler's {@code --kube-qps} default ({@code rest.DefaultQPS}). */
  public static final double HAMI_SCHEDULER_QPS = 5;

  /** HAMi scheduler's {@code --kube-burst} default ({@code rest.DefaultBurst}). */
  public static final int HAMI_SCHEDULER_BURST = 10;

  private final double qps;
  private final int burst;
  private final LongSupplier nanoTime;
  private final Sleeper sleeper;
  private double tokens;
  private long last;

  GoClientRateLimit(double qps, int burst, LongSupplier nanoTime, Sleeper sleeper) {
    checkArgument(
        qps > 0 && !Double.isInfinite(qps),
        "qps must be a positive finite number of requests per second, got %s",
        qps);
    checkArgument(burst >= 1, "burst must be at least 1 request, got %s", burst);
    this.qps = qps;
    this.burst = burst;
    this.nanoTime = nanoTime;
    this.sleeper = sleeper;
    this.tokens = burst;
    this.last = nanoTime.getAsLong();
  }

  /**
   * Throttles every request of {@code client} (its OkHttp client is replaced by a copy with the
   * limit as the first application interceptor; connection pool and settings are kept).
   *
   * @param client the client, e.g. the one given to {@link HamiNodeLock#builder}
   * @param qps tokens per second, e.g. {@link #HAMI_SCHEDULER_QPS}; positive
   * @param burst bucket size, e.g. {@link #HAMI_SCHEDULER_BURST}; at least 1
   * @return {@code client}
   * @throws IllegalArgumentException naming the bad value
   */
  public static ApiClient install(ApiClient client, double qps, int burst) {
    GoClientRateLimit limit = new GoClientRateLimit(qps, burst, System::nanoTime, Sleeper.REAL);
    client.setHttpClient(client.getHttpClient().newBuilder().addInterceptor(limit).build());
    return client;
  }

  /**
   * Reserves the next token ({@code rate.Limiter.Reserve}): tokens refilled since the last
   * reservation, capped at the burst, minus one; a negative balance is the wait.
   *
   * @return how long the caller must wait before sending
   */
  synchronized Duration reserve() {
    long now = nanoTime.getAsLong();
    tokens = Math.min(burst, tokens + (now - last) / 1e9 * qps);
    last = now;
    tokens -= 1;
    return tokens >= 0 ? Duration.ZERO : Duration.ofNanos((long) Math.ceil(-tokens / qps * 1e9));
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Duration wait = reserve();
    if (!wait.isZero()) {
      try {
        sleeper.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException(
            "interrupted waiting "
                + wait.toMillis()
                + " ms for the client rate limit ("
                + qps
                + " QPS, burst "
                + burst
                + ")");
      }
    }
    return chain.proceed(chain.request());
  }
}
