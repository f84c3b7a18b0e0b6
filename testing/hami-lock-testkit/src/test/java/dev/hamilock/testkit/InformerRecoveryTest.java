package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testing.logs.LogCapture;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A client-java informer keeps receiving updates after dropped watches and after compaction. */
class InformerRecoveryTest {
  private static final Duration LIMIT = Duration.ofSeconds(30);

  private static void annotate(ApiServerEmulator emu, String value) {
    emu.mutate(
        "nodes",
        null,
        "node-a",
        n -> {
          ((com.fasterxml.jackson.databind.node.ObjectNode) n.get("metadata"))
              .putObject("annotations")
              .put("v", value);
          return n;
        });
  }

  private static String seen(SharedIndexInformer<V1Node> inf) {
    V1Node n = inf.getIndexer().getByKey("node-a");
    return n == null || n.getMetadata().getAnnotations() == null
        ? null
        : n.getMetadata().getAnnotations().get("v");
  }

  @Test
  void informerSurvivesDroppedWatchesAndCompaction() {
    try (LogCapture log = LogCapture.start();
        ApiServerEmulator emu = ApiServerEmulator.start()) {
      // client-java logs each dropped watch at ERROR with a stack: the event this test provokes
      log.expect(
          "ERROR io\\.kubernetes\\.client\\.informer\\.cache\\.ReflectorRunnable - .*"
              + "Reflector loop failed unexpectedly");
      emu.createNode("node-a", Map.of("v", "0"));
      SharedInformerFactory factory = new SharedInformerFactory(emu.watchApiClient());
      GenericKubernetesApi<V1Node, V1NodeList> nodes =
          new GenericKubernetesApi<>(
              V1Node.class, V1NodeList.class, "", "v1", "nodes", emu.watchApiClient());
      SharedIndexInformer<V1Node> inf = factory.sharedIndexInformerFor(nodes, V1Node.class, 0);
      factory.startAllRegisteredInformers();
      try {
        Await.until("initial sync", LIMIT, inf::hasSynced);
        Await.until("watch open", LIMIT, () -> emu.openWatches() == 1);
        annotate(emu, "1");
        Await.until("live update v=1", LIMIT, () -> "1".equals(seen(inf)));

        long listsBefore = emu.requestCount("list", "nodes");
        assertThat(emu.dropWatches()).isEqualTo(1);
        annotate(emu, "2");
        Await.until("update v=2 after dropWatches", LIMIT, () -> "2".equals(seen(inf)));
        Await.until("re-watch", LIMIT, () -> emu.openWatches() == 1);
        assertThat(emu.requestCount("list", "nodes"))
            .as("resume from RV needs no relist")
            .isEqualTo(listsBefore);

        annotate(emu, "3");
        Await.until("update v=3", LIMIT, () -> "3".equals(seen(inf)));
        emu.compact();
        emu.dropWatches();
        Await.until(
            "relist after 410 Expired",
            LIMIT,
            () -> emu.requestCount("list", "nodes") > listsBefore);
        Await.until("re-watch after relist", LIMIT, () -> emu.openWatches() == 1);
        annotate(emu, "4");
        Await.until("update v=4 after compaction", LIMIT, () -> "4".equals(seen(inf)));
      } finally {
        stopQuietly(factory);
      }
    }
  }

  /**
   * Stops the informers; client-java 27 logs the interruption of each informer's processing loop at
   * ERROR ({@code DefaultController#processLoop get interrupted}) on every stop, which is expected
   * here and captured instead of printed.
   */
  static void stopQuietly(SharedInformerFactory factory) {
    try (LogCapture log = LogCapture.start()) {
      factory.stopAllRegisteredInformers(true);
      Await.until(
          "informer threads stopped",
          LIMIT,
          () ->
              Thread.getAllStackTraces().keySet().stream()
                  .noneMatch(t -> t.getName().startsWith("informer-controller-")));
      log.expect(
          "ERROR io\\.kubernetes\\.client\\.informer\\.cache\\.Controller - "
              + "DefaultController#processLoop get interrupted");
    }
  }
}
