package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/** Watch framing, resume, synthetic ADDED, selector transitions, bookmarks, timeouts and 410. */
class WatchTest {
  /** Reads watch events line by line until the server ends the stream (or {@code max} events). */
  static final class Stream implements AutoCloseable {
    final Response response;
    final BufferedReader reader;

    Stream(ApiServerEmulator emu, String pathAndQuery) throws IOException {
      OkHttpClient http = emu.watchApiClient().getHttpClient();
      response =
          http.newCall(new Request.Builder().url(emu.url() + pathAndQuery).build()).execute();
      reader =
          new BufferedReader(
              new InputStreamReader(response.body().byteStream(), StandardCharsets.UTF_8));
    }

    JsonNode next() throws IOException {
      String line = reader.readLine();
      return line == null ? null : Fx.MAPPER.readTree(line);
    }

    List<JsonNode> rest() throws IOException {
      List<JsonNode> out = new ArrayList<>();
      for (JsonNode e = next(); e != null; e = next()) {
        out.add(e);
      }
      return out;
    }

    @Override
    public void close() {
      response.close();
    }
  }

  private static void label(ApiServerEmulator emu, String key, String value) {
    emu.mutate(
        "nodes",
        null,
        "node-a",
        n -> {
          ObjectNode m = (ObjectNode) n.get("metadata");
          ObjectNode l = m.has("labels") ? (ObjectNode) m.get("labels") : m.putObject("labels");
          if (value == null) {
            l.remove(key);
          } else {
            l.put(key, value);
          }
          return n;
        });
  }

  @Test
  void rvZeroGivesSyntheticAddedThenLiveEvents() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.start()) {
      emu.createNode("node-a", Map.of());
      emu.createNode("node-b", Map.of());
      try (Stream s = new Stream(emu, "/api/v1/nodes?watch=1&resourceVersion=0")) {
        assertThat(s.response.code()).isEqualTo(200);
        JsonNode a = s.next();
        JsonNode b = s.next();
        assertThat(List.of(a.path("type").asText(), b.path("type").asText()))
            .containsExactly("ADDED", "ADDED");
        assertThat(a.path("object").path("metadata").path("name").asText()).isEqualTo("node-a");
        label(emu, "x", "y");
        JsonNode m = s.next();
        assertThat(m.path("type").asText()).isEqualTo("MODIFIED");
        assertThat(m.path("object").path("metadata").path("resourceVersion").asText())
            .isEqualTo(Long.toString(emu.revision()));
      }
    }
  }

  @Test
  void labelSelectorTransitionsBecomeAddedAndDeleted() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.start()) {
      emu.createNode("node-a", Map.of());
      String rv = Long.toString(emu.revision());
      try (Stream s =
          new Stream(
              emu, "/api/v1/nodes?watch=true&labelSelector=gpu%3Dtrue&resourceVersion=" + rv)) {
        label(emu, "other", "1"); // invisible: matches neither before nor after
        label(emu, "gpu", "true");
        label(emu, "zone", "a");
        label(emu, "gpu", null);
        assertThat(s.next().path("type").asText()).isEqualTo("ADDED");
        assertThat(s.next().path("type").asText()).isEqualTo("MODIFIED");
        JsonNode gone = s.next();
        assertThat(gone.path("type").asText()).isEqualTo("DELETED");
        assertThat(gone.path("object").path("metadata").path("labels").has("gpu")).isFalse();
      }
    }
  }

  @Test
  void fieldSelectorOnNameAndDeleteEvent() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.start()) {
      emu.createPod("default", "p1", Map.of());
      emu.createPod("default", "p2", Map.of());
      try (Stream s =
          new Stream(
              emu, "/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dp2")) {
        assertThat(s.next().path("object").path("metadata").path("name").asText()).isEqualTo("p2");
        emu.delete("pods", "default", "p1");
        emu.delete("pods", "default", "p2");
        JsonNode d = s.next();
        assertThat(d.path("type").asText()).isEqualTo("DELETED");
        assertThat(d.path("object").path("metadata").path("name").asText()).isEqualTo("p2");
        assertThat(d.path("object").path("metadata").path("resourceVersion").asText())
            .isEqualTo(Long.toString(emu.revision()));
      }
    }
  }

  @Test
  void timeoutEndsTheStreamWithABookmarkAtTheCurrentRevision() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.start()) {
      emu.createNode("node-a", Map.of());
      String rv = Long.toString(emu.revision());
      try (Stream s =
          new Stream(
              emu,
              "/api/v1/nodes?watch=true&allowWatchBookmarks=true&timeoutSeconds=1"
                  + "&resourceVersion="
                  + rv)) {
        label(emu, "a", "b");
        List<JsonNode> events = s.rest();
        assertThat(events).isNotEmpty();
        assertThat(events.get(0).path("type").asText()).isEqualTo("MODIFIED");
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.path("type").asText()).isEqualTo("BOOKMARK");
        assertThat(last.path("object").path("kind").asText()).isEqualTo("Node");
        assertThat(last.path("object").path("metadata").path("resourceVersion").asText())
            .isEqualTo(Long.toString(emu.revision()));
      }
    }
  }

  @Test
  void periodicBookmarksAndNoneWithoutOptIn() throws Exception {
    try (ApiServerEmulator emu =
        ApiServerEmulator.builder().bookmarkInterval(Duration.ofMillis(100)).start()) {
      try (Stream s =
          new Stream(
              emu,
              "/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion="
                  + emu.revision())) {
        assertThat(s.next().path("type").asText()).isEqualTo("BOOKMARK");
        assertThat(s.next().path("type").asText()).isEqualTo("BOOKMARK");
      }
      try (Stream s =
          new Stream(
              emu, "/api/v1/nodes?watch=true&timeoutSeconds=1&resourceVersion=" + emu.revision())) {
        assertThat(s.rest()).isEmpty();
      }
    }
  }

  @Test
  void dropWatchesEndsOpenStreams() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.start()) {
      try (Stream s =
          new Stream(emu, "/api/v1/nodes?watch=true&resourceVersion=" + emu.revision())) {
        Await.until("watch registered", Duration.ofSeconds(10), () -> emu.openWatches() == 1);
        assertThat(emu.dropWatches()).isEqualTo(1);
        assertThat(s.next()).isNull();
        assertThat(emu.openWatches()).isZero();
      }
    }
  }

  @Test
  void historyOverflowExpiresOldResourceVersions() throws Exception {
    try (ApiServerEmulator emu = ApiServerEmulator.builder().eventHistoryLimit(3).start()) {
      emu.createNode("node-a", Map.of());
      String old = Long.toString(emu.revision());
      for (int i = 0; i < 5; i++) {
        label(emu, "i", Integer.toString(i));
      }
      try (Stream s = new Stream(emu, "/api/v1/nodes?watch=true&resourceVersion=" + old)) {
        List<JsonNode> events = s.rest();
        assertThat(events).hasSize(1);
        assertThat(events.get(0).path("type").asText()).isEqualTo("ERROR");
        assertThat(events.get(0).path("object").path("code").asInt()).isEqualTo(410);
        assertThat(events.get(0).path("object").path("reason").asText()).isEqualTo("Expired");
      }
      String recent = Long.toString(emu.revision() - 2);
      try (Stream s =
          new Stream(emu, "/api/v1/nodes?watch=true&timeoutSeconds=1&resourceVersion=" + recent)) {
        assertThat(s.rest())
            .extracting(e -> e.path("type").asText())
            .containsExactly("MODIFIED", "MODIFIED");
      }
    }
  }
}
