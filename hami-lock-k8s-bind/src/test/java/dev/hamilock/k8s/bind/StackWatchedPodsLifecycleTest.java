package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.HamiStack;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.Fabric8WatchTransport;
import dev.hamilock.fabric8.bind.Fabric8HamiStack;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.k8s.watch.KubeWatchTransport;
import dev.hamilock.testkit.ApiServerEmulator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Breaker10: the lifecycle of the stack's pod watch ({@code HamiStack.Builder.watchedPods}). */
class StackWatchedPodsLifecycleTest {

  private static final RetryPolicy FAST =
      RetryPolicy.builder()
          .pollInterval(Duration.ofMillis(5))
          .retryTimeout(Duration.ofSeconds(5))
          .build();
  private static final Duration TEN_SECONDS = Duration.ofSeconds(10);

  private ApiServerEmulator k8s;
  private final CountDownLatch resume = new CountDownLatch(1);

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
  }

  @AfterEach
  void stop() {
    resume.countDown();
    k8s.close();
  }

  /**
   * close() while the pod watch's re-opened stream is held up in the API server (its response
   * headers not sent yet): the stack's close() must stop its watch thread, as it does when the
   * stream is open (BindCostOnBothClientsTest), on client-java.
   */
  @Test
  void closeStopsTheClientJavaPodWatchWhileItsWatchOpenIsHeldUp() throws Exception {
    closeWhileHeldUp(
        () ->
            KubernetesHamiStack.builder(k8s.newApiClient(TEN_SECONDS))
                .stack(
                    s ->
                        s.watchedPods(
                            KubeWatchTransport.create(k8s.apiClient(), TEN_SECONDS),
                            TEN_SECONDS,
                            TEN_SECONDS))
                .retryPolicy(FAST)
                .watch(false)
                .build());
  }

  /** The same on fabric8. */
  @Test
  void closeStopsTheFabric8PodWatchWhileItsWatchOpenIsHeldUp() throws Exception {
    try (KubernetesClient client = Fabric8Replicas.client(k8s)) {
      closeWhileHeldUp(
          () ->
              Fabric8HamiStack.builder(client)
                  .retryPolicy(FAST)
                  .backend(Fabric8LockStack.backend(client, Optional.empty()))
                  .watchedPods(Fabric8WatchTransport.create(client), TEN_SECONDS, TEN_SECONDS)
                  .build());
    }
  }

  private void closeWhileHeldUp(Supplier<HamiStack> build) throws Exception {
    Set<Thread> before = watchThreads();
    HamiStack hami = build.get();
    try {
      assertThat(hami.awaitReady(TEN_SECONDS)).as("ready").isTrue();
      await(() -> k8s.openWatches() == 1, "the pod watch streaming");
      k8s.holdUpNextWatch("pods", resume);
    } finally {
      hami.close();
    }
    Set<Thread> after = watchThreads();
    after.removeAll(before);
    assertThat(after).as("the stack's watch thread alive after its close()").isEmpty();
  }

  /**
   * awaitReady documents "false on timeout or once closed": a stack whose pod watch never lists
   * (its transport fails every LIST) and is closed meanwhile answers false at its close, not after
   * the whole timeout (here 10 minutes; the test waits 20 s for the answer).
   */
  @Test
  void awaitReadyAnswersFalseOnceClosedThoughThePodsNeverListed() throws Exception {
    ListAndWatch.Transport neverLists = new FailingTransport();
    KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(TEN_SECONDS))
            .stack(s -> s.watchedPods(neverLists, Duration.ZERO, Duration.ZERO))
            .retryPolicy(FAST)
            .watch(false)
            .build();
    AtomicReference<Boolean> ready = new AtomicReference<>();
    CountDownLatch waiting = new CountDownLatch(1);
    Thread t =
        new Thread(
            () -> {
              waiting.countDown();
              try {
                ready.set(hami.awaitReady(Duration.ofMinutes(10)));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "breaker10-await-ready");
    t.setDaemon(true);
    try {
      t.start();
      assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
      // let it enter awaitListed: closed before would answer false at once anyway
      await(() -> t.getState() == Thread.State.TIMED_WAITING, "awaitReady waiting");
    } finally {
      hami.close();
    }
    t.join(20_000);
    assertThat(ready.get()).as("awaitReady's answer 20 s after close()").isFalse();
    t.interrupt();
  }

  /** A transport whose every LIST fails: the store never lists. */
  private static final class FailingTransport implements ListAndWatch.Transport {
    @Override
    public Map<?, ?> listPage(String path, String continueToken) throws IOException {
      throw new IOException("breaker10: no listing");
    }

    @Override
    public ListAndWatch.LineStream watch(String path, String resourceVersion, long timeoutSeconds)
        throws IOException {
      throw new IOException("breaker10: no watch");
    }

    @Override
    public Map<?, ?> parseObject(String json) {
      throw new IllegalArgumentException("breaker10");
    }

    @Override
    public boolean isGone(Exception failure) {
      return false;
    }
  }

  private static Set<Thread> watchThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("hami-lock-watch-") && t.isAlive())
        .collect(Collectors.toCollection(HashSet::new));
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(condition.getAsBoolean()).as(what).isTrue();
  }
}
