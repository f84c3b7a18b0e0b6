package dev.hamilock.fabric8;

import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.fabric8.internal.Fabric8Http;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Core's {@link ListAndWatch.Transport} over fabric8's own HTTP client (its base URL, credentials,
 * TLS): LIST pages as raw GETs with the client's request timeout and at most 4 repetitions of a
 * 5xx, 429 or failed connection, streams as a plain chunked GET, JSON by the client's
 * serialization. It does not use fabric8's {@code Watcher}: that one opens a WebSocket first and
 * reconnects on its own, so its user could not tell which events it missed. A failure is core's
 * {@link Failure} with the status (410: {@link #isGone}). Thread-safe.
 */
public final class Fabric8WatchTransport implements ListAndWatch.Transport {

  private final KubernetesClient client;
  private final Fabric8Http.Requests reads;

  private Fabric8WatchTransport(KubernetesClient client) {
    this.client = client;
    this.reads = Fabric8Http.repeating(client, 4);
  }

  /**
   * @param client a fabric8 client; not closed by the transport
   * @return the transport
   * @throws NullPointerException if {@code client} is null
   */
  public static Fabric8WatchTransport create(KubernetesClient client) {
    return new Fabric8WatchTransport(Objects.requireNonNull(client, "client"));
  }

  @Override
  public Map<?, ?> listPage(String path, String continueToken) throws Failure {
    String query = continueToken == null ? "" : "&continue=" + encode(continueToken);
    return Fabric8Http.sendForObject(reads, relative(path) + "?limit=500" + query, b -> b);
  }

  @Override
  public ListAndWatch.LineStream watch(String path, String resourceVersion, long timeoutSeconds)
      throws Exception {
    HttpClient http = Fabric8Http.repeating(client, 0).http(); // ListAndWatch backs off
    String url =
        client.getMasterUrl()
            + relative(path)
            + "?watch=true&allowWatchBookmarks=true&resourceVersion="
            + encode(resourceVersion)
            + "&timeoutSeconds="
            + timeoutSeconds;
    CompletableFuture<HttpResponse<InputStream>> call =
        http.sendAsync(http.newHttpRequestBuilder().uri(url).build(), InputStream.class);
    HttpResponse<InputStream> r;
    try {
      r = call.get();
    } catch (InterruptedException e) { // relist() or close(): never leave the stream open
      call.cancel(true); // fabric8 closes an answer that comes after
      call.thenAccept(late -> closeQuietly(late.body())); // one that came meanwhile
      throw e;
    }
    InputStream in = r.body();
    if (!r.isSuccessful()) {
      in.close();
      throw new Failure(r.code(), null, false, false, "watch " + path + ": HTTP " + r.code(), null);
    }
    BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    return new ListAndWatch.LineStream() {
      @Override
      public String readLine() throws IOException {
        return lines.readLine();
      }

      @Override
      public void close() throws IOException {
        in.close();
      }
    };
  }

  @Override
  public Map<?, ?> parseObject(String json) {
    return client.getKubernetesSerialization().unmarshal(json, Map.class);
  }

  @Override
  public boolean isGone(Exception failure) {
    return failure instanceof Failure f && f.status() == 410;
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException ignored) { // closing an unread stream
    }
  }

  private static String relative(String path) {
    return path.startsWith("/") ? path.substring(1) : path;
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
