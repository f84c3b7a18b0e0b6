package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.fabric8.Fabric8WatchTransport;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Fabric8WatchTransport#watch} interrupted (ListAndWatch's relist() interrupts the watch
 * thread; AbstractNodeLockWatch calls it for every key added) while the stream is opening: the
 * transport threw the InterruptedException of {@code sendAsync(..).get()} and left the request
 * running, so its answer, a watch stream, was never read nor closed. The API server kept it open
 * beside the new one for the whole {@code timeoutSeconds} (5 minutes by default), writing every
 * event of the resource into it: one leaked watch per interruption. Fixed: the call is cancelled
 * (fabric8 closes an answer that comes after).
 */
class Fabric8WatchOpenInterruptedTest {

  private ApiServerEmulator k8s;
  private KubernetesClient fabric8;
  private ListAndWatch watch;
  private final CountDownLatch resume = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    // bookmarks every 100 ms: the emulator notices a watch its client closed at the next write
    k8s = ApiServerEmulator.builder().bookmarkInterval(Duration.ofMillis(100)).start();
    fabric8 = Fabric8Replicas.client(k8s);
  }

  @AfterEach
  void stop() {
    resume.countDown();
    if (watch != null) {
      watch.close();
    }
    fabric8.close();
    k8s.close();
  }

  @Test
  void aWatchOpenInterruptedByARelistLeavesNoStreamOpen() throws Exception {
    WatchedPods pods = new WatchedPods();
    watch =
        ListAndWatch.of(
                "pod watch", "/api/v1/pods", Fabric8WatchTransport.create(fabric8), pods.sink())
            .start();
    await(() -> pods.version() > 0 && k8s.openWatches() == 1, "listed and streaming");

    AtomicInteger heldUp = new AtomicInteger();
    k8s.addFault(
        FaultRule.matching()
            .verb("watch")
            .resource("pods")
            .times(1)
            .invoke(
                r -> {
                  heldUp.incrementAndGet();
                  try {
                    resume.await(30, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }));
    k8s.dropWatches();
    await(() -> heldUp.get() == 1, "the re-opened watch held up in the API server");

    long listings = watch.relistCount();
    watch.relist(); // interrupts the watch thread waiting for the held-up answer
    await(
        () -> watch.relistCount() > listings && k8s.openWatches() == 1,
        "listed again and a new stream open");
    resume.countDown(); // the held-up watch now answers

    // let the held-up watch register in the emulator (not asserted: a fixed client may close it
    // at once), then it must be gone: closed by the client, noticed at the next bookmark
    poll(() -> k8s.openWatches() >= 2, 3);
    await(() -> k8s.openWatches() == 1, "only the loop's own stream open");
  }

  private static boolean poll(BooleanSupplier condition, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    return condition.getAsBoolean();
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    assertThat(poll(condition, 10)).as(what + ", within 10 s").isTrue();
  }
}
