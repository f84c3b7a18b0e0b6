package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.NodeLock;
import dev.hamilock.k8s.watch.NodeLockWatch;
import dev.hamilock.testkit.ApiServerEmulator;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * OkHttp (Kotlin) throws the {@link InterruptedException} of an interrupted connect although no
 * Java signature declares it. The node lock watch caught only {@code ApiException}, {@code
 * IOException}, {@code RuntimeException} and {@code LinkageError}, so such an exception killed its
 * thread with an uncaught stack trace ("Exception in thread hami-lock-node-watch-N
 * java.lang.InterruptedException", seen in a new user's {@code mvn -B verify}); while not closed,
 * the watch must treat it as a failed attempt and connect again.
 */
class SneakedInterruptTest {

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }

  @Test
  void anInterruptedExceptionFromTheHttpClientIsAFailedAttemptNotADeadThread() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      new Cluster(k8s).node(Cluster.unique("sneaked"));
      AtomicInteger failures = new AtomicInteger(2);
      ApiClient client = k8s.newApiClient(Duration.ofSeconds(5));
      client.setHttpClient(
          client
              .getHttpClient()
              .newBuilder()
              .addInterceptor(
                  chain -> {
                    boolean watch = "true".equals(chain.request().url().queryParameter("watch"));
                    if (watch && failures.getAndDecrement() > 0) {
                      throw sneaky(new InterruptedException("connect interrupted"));
                    }
                    return chain.proceed(chain.request());
                  })
              .build());
      List<Throwable> uncaught = new CopyOnWriteArrayList<>();
      try (NodeLockWatch watch =
          NodeLockWatch.builder(client)
              .threadFactory(
                  r -> {
                    Thread t = new Thread(r, "sneaked-interrupt-watch");
                    t.setDaemon(true);
                    t.setUncaughtExceptionHandler((th, e) -> uncaught.add(e));
                    return t;
                  })
              .build()) {
        watch.releaseSignal(NodeLock.DEFAULT_KEY);
        watch.start();
        assertThat(watch.awaitSynced(Duration.ofSeconds(10)))
            .as("synced after the interrupted attempts (uncaught: %s)", uncaught)
            .isTrue();
        assertThat(failures.get()).as("both injected failures were met").isNegative();
      }
      assertThat(uncaught).isEmpty();
    }
  }
}
