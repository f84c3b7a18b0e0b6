package dev.hamilock.fabric8;

import dev.hamilock.core.WaitClock;
import dev.hamilock.core.annotation.AbstractNodeLockWatch;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One shared watch of all Nodes per fabric8 client feeding core's {@link
 * dev.hamilock.core.FairReleaseQueue} of each lock key: core's {@link AbstractNodeLockWatch} (the
 * protocol, release detection, reliable mode and lifecycle, documented there) over fabric8: LIST
 * pages by {@code nodes().list}, the stream through fabric8's HTTP client. It does not use
 * fabric8's {@code Watcher}: that one opens a WebSocket first and reconnects on its own, so this
 * watch could not tell when its queues may be called reliable. One daemon thread ({@code
 * hami-lock-fabric8-node-watch-N}), server-side watch timeout 5 min.
 */
public final class Fabric8NodeLockWatch extends AbstractNodeLockWatch {

  private static final AtomicInteger THREADS = new AtomicInteger();

  private final KubernetesClient client;

  private Fabric8NodeLockWatch(KubernetesClient client, WaitClock time) {
    super(
        r -> {
          Thread t = new Thread(r, "hami-lock-fabric8-node-watch-" + THREADS.incrementAndGet());
          t.setDaemon(true);
          return t;
        },
        time,
        Duration.ofMinutes(5));
    this.client = client;
  }

  /**
   * @param client a fabric8 client; not closed by the watch
   * @return the watch, not started; add keys with {@link #releaseSignal(String)}
   * @throws NullPointerException if {@code client} is null
   */
  public static Fabric8NodeLockWatch create(KubernetesClient client) {
    return create(client, WaitClock.SYSTEM);
  }

  /**
   * @param client a fabric8 client; not closed by the watch
   * @param time the random source of the reconnect back-off's jitter and the {@code timeoutSeconds}
   *     spread (the acquire loop's seam)
   * @return the watch, not started; add keys with {@link #releaseSignal(String)}
   * @throws NullPointerException if an argument is null
   */
  public static Fabric8NodeLockWatch create(KubernetesClient client, WaitClock time) {
    return new Fabric8NodeLockWatch(Objects.requireNonNull(client, "client"), time);
  }

  @Override
  public Fabric8NodeLockWatch start() {
    super.start();
    return this;
  }

  @Override
  protected Page listPage(String continueToken) {
    ListOptions options = new ListOptions();
    options.setLimit(500L);
    options.setContinue(continueToken);
    NodeList page = client.nodes().list(options);
    Map<String, Map<String, String>> nodes = new HashMap<>();
    for (Node n : page.getItems()) {
      Map<String, String> a = n.getMetadata().getAnnotations();
      nodes.put(n.getMetadata().getName(), a == null ? Map.of() : a);
    }
    return new Page(
        nodes, page.getMetadata().getResourceVersion(), page.getMetadata().getContinue());
  }

  @Override
  protected LineStream open(String resourceVersion, long timeoutSeconds) throws Exception {
    HttpClient http = client.getHttpClient();
    String url =
        client.getMasterUrl()
            + "api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion="
            + URLEncoder.encode(resourceVersion, StandardCharsets.UTF_8)
            + "&timeoutSeconds="
            + timeoutSeconds;
    HttpResponse<InputStream> r =
        http.sendAsync(http.newHttpRequestBuilder().uri(url).build(), InputStream.class).get();
    InputStream in = r.body();
    if (!r.isSuccessful()) {
      in.close();
      throw new KubernetesClientException("watch nodes: HTTP " + r.code(), r.code(), null);
    }
    BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    return new LineStream() {
      @Override
      public String readLine() throws java.io.IOException {
        return lines.readLine();
      }

      @Override
      public void close() throws java.io.IOException {
        in.close();
      }
    };
  }

  @Override
  protected Map<?, ?> parseObject(String json) {
    return client.getKubernetesSerialization().unmarshal(json, Map.class);
  }

  @Override
  protected boolean isGone(Exception failure) {
    return failure instanceof KubernetesClientException k && k.getCode() == 410;
  }
}
