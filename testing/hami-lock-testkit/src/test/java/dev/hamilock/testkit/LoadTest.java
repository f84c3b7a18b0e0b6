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
 * 32 concurrent clients each make {@code testkit.load.patches} (default 150; the 1 000 is
 * runnable with {@code -Dtestkit.load.patches=1000}) read-then-conditional-merge-patch attempts on
 * one node's counter annotation. Linearizable writes mean no lost update: the final counter equals
 * the number of 200 answers, and every other answer is a 409 Conflict.
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
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < PATCHES; i++) {
                    V1Node n = api.readNode("node-a").execute();
                    long counter = Long.parseLong(n.getMetadata().getAnnotations().get("counter"));
                    String patch =
                        "{\"metadata\":{\"resourceVersion\":\""
                            + n.getMetadata().getResourceVersion()
                            + "\",\"annotations\":{\"counter\":\""
                            + (counter + 1)
                            + "\"}}}";
                    try {
                      PatchUtils.patch(
                          V1Node.class,
                          () -> api.patchNode("node-a", new V1Patch(patch)).buildCall(null),
                          V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
                          client);
                      ok.incrementAndGet();
                    } catch (ApiException e) {
                      assertThat(e.getCode())
                          .as("only conflicts may fail: %s", e.getResponseBody())
                          .isEqualTo(409);
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
      long counter =
          Long.parseLong(
              emu.get("nodes", null, "node-a")
                  .orElseThrow()
                  .path("metadata")
                  .path("annotations")
                  .path("counter")
                  .asText());
      assertThat(ok.get() + conflicts.get()).isEqualTo((long) CLIENTS * PATCHES);
      assertThat(counter).isEqualTo(ok.get());
      assertThat(ok.get()).isPositive();
      assertThat(emu.requestCount("patch", "nodes")).isEqualTo((long) CLIENTS * PATCHES);
    }
  }

  /**
   * Like kube-apiserver, the emulator keeps every idle keep-alive connection open: 300 clients,
   * each with its own connection (more than the JDK HTTP server's default of 200 idle ones), each
   * make a request, all wait, then each sends again on the same connection — none was closed under
   * it (with the JDK default, about a quarter were, and a client's next PATCH on such a connection
   * fails with "unexpected end of stream" and no answer: an ambiguous write).
   */
  @Test
  void manyIdleKeepAliveConnectionsStayOpen() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.start()) {
      java.net.URI uri = java.net.URI.create(emu.url());
      byte[] request =
          ("GET /version HTTP/1.1\r\nHost: " + uri.getHost() + "\r\n\r\n")
              .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
      List<java.net.Socket> sockets = new ArrayList<>();
      try {
        for (int i = 0; i < 300; i++) {
          java.net.Socket s = new java.net.Socket(uri.getHost(), uri.getPort());
          s.setSoTimeout(10_000);
          sockets.add(s);
          s.getOutputStream().write(request);
          assertThat(readResponse(s)).startsWith("HTTP/1.1 200");
        }
        Thread.sleep(300); // let the server file every connection as idle
        int closed = 0;
        for (java.net.Socket s : sockets) {
          try {
            s.getOutputStream().write(request);
            if (!readResponse(s).startsWith("HTTP/1.1 200")) {
              closed++;
            }
          } catch (java.io.IOException e) {
            closed++;
          }
        }
        assertThat(closed).as("keep-alive connections the server closed").isZero();
      } finally {
        for (java.net.Socket s : sockets) {
          s.close();
        }
      }
    }
  }

  /**
   * Reads one response with a Content-Length body; returns "" if the server closed the connection.
   */
  private static String readResponse(java.net.Socket s) throws java.io.IOException {
    java.io.InputStream in = s.getInputStream();
    StringBuilder head = new StringBuilder();
    int c;
    while (!head.toString().endsWith("\r\n\r\n")) {
      if ((c = in.read()) < 0) {
        return "";
      }
      head.append((char) c);
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
    int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
    in.readNBytes(length);
    return head.toString();
  }
}
