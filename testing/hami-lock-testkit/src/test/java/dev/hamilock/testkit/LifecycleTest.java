package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Start/stop cycles leave no emulator threads behind and the closed emulators are collectable. */
class LifecycleTest {
  private static List<String> emulatorThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(
            n ->
                n.startsWith("hami-testkit-")
                    || n.equals("HTTP-Dispatcher")
                    || n.startsWith("server-timer"))
        .collect(Collectors.toList());
  }

  private static WeakReference<ApiServerEmulator> cycle() throws Exception {
    ApiServerEmulator emu = ApiServerEmulator.start();
    try {
      emu.createNode("node-a", Map.of());
      assertThat(
              new CoreV1Api(emu.apiClient()).readNode("node-a").execute().getMetadata().getName())
          .isEqualTo("node-a");
      // an open watch must be closed by close()
      okhttp3.Call watch =
          new CoreV1Api(emu.watchApiClient()).listNode().watch(true).buildCall(null);
      okhttp3.Response r = watch.execute();
      Await.until("watch registered", Duration.ofSeconds(10), () -> emu.openWatches() == 1);
      r.close();
    } finally {
      emu.close();
    }
    return new WeakReference<>(emu);
  }

  @Test
  void tenStartStopCyclesLeakNoThreadsAndNoEmulator() throws Exception {
    cycle(); // warm up class loading and OkHttp's shared task runner
    Await.until("warm-up threads gone", Duration.ofSeconds(10), () -> emulatorThreads().isEmpty());
    int baseline = Thread.activeCount();
    WeakReference<ApiServerEmulator> last = null;
    for (int i = 0; i < 10; i++) {
      last = cycle();
      int cycle = i;
      // close() waits for the pool to terminate; the exiting worker threads die right after
      Await.until(
          "emulator threads of cycle " + cycle + " ended: " + emulatorThreads(),
          Duration.ofSeconds(10),
          () -> emulatorThreads().isEmpty());
    }
    // OkHttp's shared TaskRunner may keep a few idle threads; bound the growth, not timing
    assertThat(Thread.activeCount()).isLessThanOrEqualTo(baseline + 4);
    WeakReference<ApiServerEmulator> ref = last;
    Await.until(
        "closed emulator garbage-collected",
        Duration.ofSeconds(20),
        () -> {
          System.gc();
          return ref.get() == null;
        });
  }
}
