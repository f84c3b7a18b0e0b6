package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.util.PatchUtils;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * 32 concurrent clients each make {@code testkit.load.patches} (default 150; the 1 000
 * is runnable with {@code -Dtestkit.load.patches=1000}) read-then-conditional-merge-patch
 * attempts on one node's counter annotation. Linearizable writes mean no lost update: the final
 * counter equals the number of 200 answers, and every other answer is a 409 Conflict.
 */
class LoadTest {
  private static final int CLIENTS = 32;
  private static final int PATCHES = Integer.getInteger("testkit.load.patches", 150);

  @Test
  void conditionalPatchesNeverLoseAnUpdate() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.builder().writeHistoryLimit(0).start()) {
      emu.createNode("node-a", Map.of("counter", "0"));
      AtomicLong ok = new AtomicLong();
      AtomicLong conflicts = new AtomicLong();
      ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
      List<Future<?>> futures = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        ApiClient client = emu.newApiClient(Duration.ofSeconds(30));
        CoreV1Api api = new CoreV1Api(client);
        futures.add(pool.submit(() -> {
          for (int i = 0; i < PATCHES; i++) {
            V1Node n = api.readNode("node-a").execute();
            long counter = Long.parseLong(n.getMetadata().getAnnotations().get("counter"));
            String patch = "{\"metadata\":{\"resourceVersion\":\"" + n.getMetadata().getResourceVersion()
                + "\",\"annotations\":{\"counter\":\"" + (counter + 1) + "\"}}}";
            try {
              PatchUtils.patch(V1Node.class, () -> api.patchNode("node-a", new V1Patch(patch)).buildCall(null),
                  V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, client);
              ok.incrementAndGet();
            } catch (ApiException e) {
              assertThat(e.getCode()).as("only conflicts may fail: %s", e.getResponseBody()).isEqualTo(409);
              conflicts.incrementAndGet();
            }
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
      pool.shutdown();
      long counter = Long.parseLong(emu.get("nodes", null, "node-a").orElseThrow()
          .path("metadata").path("annotations").path("counter").asText());
      assertThat(ok.get() + conflicts.get()).isEqualTo((long) CLIENTS * PATCHES);
      assertThat(counter).isEqualTo(ok.get());
      assertThat(ok.get()).isPositive();
      assertThat(emu.requestCount("patch", "nodes")).isEqualTo((long) CLIENTS * PATCHES);
    }
  }
}
