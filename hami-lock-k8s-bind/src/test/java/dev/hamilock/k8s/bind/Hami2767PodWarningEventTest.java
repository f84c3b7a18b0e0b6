package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.hamilock.bind.cluster.ClusterException;
import io.kubernetes.client.openapi.ApiClient;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The cluster port's event writer (HAMi#2767: an ignored policy word becomes a Warning Event on the
 * pod): one POST of a core/v1 Event to the pod's namespace, captured by a loopback server.
 */
class Hami2767PodWarningEventTest {
  final List<String> paths = new CopyOnWriteArrayList<>();
  final List<JsonObject> bodies = new CopyOnWriteArrayList<>();
  final AtomicInteger status = new AtomicInteger(201);
  ServerSocket server;
  Thread acceptor;
  KubernetesCluster cluster;

  /**
   * A minimal HTTP/1.1 responder on 127.0.0.1 (java.base only): records each request, answers
   * {@link #status}.
   */
  @BeforeEach
  void start() throws Exception {
    server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
    acceptor =
        new Thread(
            () -> {
              while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                  BufferedInputStream in = new BufferedInputStream(s.getInputStream());
                  String requestLine = line(in);
                  int length = 0;
                  for (String h = line(in); !h.isEmpty(); h = line(in)) {
                    if (h.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                      length = Integer.parseInt(h.substring(15).trim());
                    }
                  }
                  String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
                  String[] parts = requestLine.split(" ");
                  paths.add(parts[0] + " " + parts[1]);
                  bodies.add(JsonParser.parseString(body).getAsJsonObject());
                  int code = status.get();
                  byte[] answer =
                      (code < 300 ? body : "{\"kind\":\"Status\",\"code\":" + code + "}")
                          .getBytes(StandardCharsets.UTF_8);
                  OutputStream out = s.getOutputStream();
                  out.write(
                      ("HTTP/1.1 "
                              + code
                              + " X\r\nContent-Type: application/json\r\nContent-Length: "
                              + answer.length
                              + "\r\nConnection: close\r\n\r\n")
                          .getBytes(StandardCharsets.US_ASCII));
                  out.write(answer);
                  out.flush();
                } catch (IOException e) {
                  return; // closed
                }
              }
            },
            "event-capture");
    acceptor.setDaemon(true);
    acceptor.start();
    ApiClient client = new ApiClient().setBasePath("http://127.0.0.1:" + server.getLocalPort());
    cluster = KubernetesCluster.create(client, KubernetesCluster.DEFAULT_REQUEST_TIMEOUT, 1);
  }

  private static String line(BufferedInputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    for (int c = in.read(); c >= 0 && c != '\n'; c = in.read()) {
      if (c != '\r') {
        b.append((char) c);
      }
    }
    return b.toString();
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
    acceptor.join(5_000);
  }

  @Test
  void postsOneWarningEventAboutThePod() throws Exception {
    cluster.recordPodEvent(
        "team-a", "w1", "uid-1", "Warning", "IgnoredAnnotation", "pod team-a/w1: ignoring binpak");

    assertThat(paths).containsExactly("POST /api/v1/namespaces/team-a/events");
    JsonObject e = bodies.get(0);
    assertThat(e.get("kind").getAsString()).isEqualTo("Event");
    assertThat(e.get("type").getAsString()).isEqualTo("Warning");
    assertThat(e.get("reason").getAsString()).isEqualTo("IgnoredAnnotation");
    assertThat(e.get("message").getAsString()).contains("binpak");
    assertThat(e.getAsJsonObject("metadata").get("generateName").getAsString()).isEqualTo("w1.");
    assertThat(e.getAsJsonObject("metadata").get("namespace").getAsString()).isEqualTo("team-a");
    JsonObject o = e.getAsJsonObject("involvedObject");
    assertThat(o.get("kind").getAsString()).isEqualTo("Pod");
    assertThat(o.get("name").getAsString()).isEqualTo("w1");
    assertThat(o.get("namespace").getAsString()).isEqualTo("team-a");
    assertThat(o.get("uid").getAsString()).isEqualTo("uid-1");
    assertThat(e.getAsJsonObject("source").get("component").getAsString()).isEqualTo("hami-lock");
    assertThat(e.get("firstTimestamp").getAsString())
        .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
  }

  /** Routine events (a victim Preempted, as kube-scheduler records it) are Normal, same sink. */
  @Test
  void postsANormalEventAndSendsNothingForAnotherType() throws Exception {
    cluster.recordPodEvent("ns", "v1", "uid-2", "Normal", "Preempted", "Preempted by pod u");
    assertThat(bodies.get(0).get("type").getAsString()).isEqualTo("Normal");
    assertThatThrownBy(() -> cluster.recordPodEvent("ns", "v1", "", "Info", "Preempted", "m"))
        .hasMessageContaining("event type must be Normal or Warning: Info");
    assertThat(paths).hasSize(1);
  }

  @Test
  void aRefusedEventIsATypedClusterException() {
    status.set(403);
    assertThatThrownBy(
            () -> cluster.recordPodEvent("ns", "w1", "", "Warning", "IgnoredAnnotation", "m"))
        .isInstanceOf(ClusterException.class)
        .hasMessageContaining("recording event IgnoredAnnotation on pod ns/w1");
  }
}
