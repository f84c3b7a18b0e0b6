package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.hamilock.testkit.ConformanceTest.Row;
import dev.hamilock.testkit.Fx.Outcome;
import dev.hamilock.testkit.junit.BackendExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Differential conformance: every row of {@link ConformanceTest} on a fresh emulator and on the
 * real kube-apiserver (shared, reset before each row), comparing status code, Status reason, the
 * answer's body, the row's observations (watch event sequences, list items) and the stored state
 * afterwards, with volatile values (resourceVersions, uids, timestamps) normalised. A row may
 * differ only if it documents why that cannot matter to hami-lock ({@link Row#difference()}); a
 * documented difference that no longer shows fails too. After the last row it writes {@value
 * #TABLE} (run with -Preal-apiserver; {@link ConformanceTableTest} checks the committed file in the
 * default build).
 */
@Tag("real-apiserver")
@ExtendWith(DifferentialConformanceTest.RealServer.class)
class DifferentialConformanceTest {
  static final String TABLE = "CONFORMANCE.md";
  private static final ObjectMapper PRETTY =
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
  private static final Set<String> VOLATILE_KEYS =
      Set.of(
          "resourceVersion",
          "uid",
          "creationTimestamp",
          "deletionTimestamp",
          "lastTransitionTime",
          "lastProbeTime",
          "time",
          "lastHeartbeatTime");
  private static final Pattern UUID =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  private static final Pattern TS =
      Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)");
  private static final Pattern RV_TEXT =
      Pattern.compile("(?i)(resource ?version[^0-9\\n]{0,40}?)\\d+");
  private static final int LONG_TEXT = 2000;
  private static final Pattern PAREN_NUMBER = Pattern.compile("\\(\\d+\\)");

  /** What one backend answered, normalised. */
  record Observed(int code, String reason, ObjectNode normalised, String failure) {
    String cell() {
      return failure != null ? "probe failed" : (code + (reason.isEmpty() ? "" : " " + reason));
    }
  }

  record Result(Row row, Observed emulator, Observed real, String kubernetesVersion) {
    String same() {
      if (real == null) {
        return "n/a";
      }
      return emulator.normalised().equals(real.normalised()) ? "yes" : "no";
    }
  }

  private static final Map<String, Result> RESULTS = new LinkedHashMap<>();

  /** Second real servers for rows that need a kube-apiserver flag, by flag. */
  private static final Map<String, RealApiServer> EXTRA = new LinkedHashMap<>();

  private static synchronized KubeBackend realFor(Row row, KubeBackend shared) {
    if (row.realServerArg() == null) {
      return shared;
    }
    return EXTRA.computeIfAbsent(
        row.realServerArg(), a -> RealApiServer.builder().apiserverArg(a).start());
  }

  /** Resolves a {@link KubeBackend} parameter to the run's shared real server. */
  static final class RealServer implements ParameterResolver {
    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
      return p.getParameter().getType() == KubeBackend.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
      return BackendExtension.backend(KubeBackend.Kind.REAL, e);
    }
  }

  static ObjectNode normalise(Outcome o, Map<String, JsonNode> observations, JsonNode state) {
    ObjectNode n = Fx.MAPPER.createObjectNode();
    n.put("code", o.code());
    n.put("reason", o.reason());
    JsonNode body = o.body();
    if (body != null
        && body.isObject()
        && !"Status".equals(body.path("kind").asText())
        && body.has("metadata")) {
      ObjectNode summary = Fx.MAPPER.createObjectNode();
      summary.put("kind", body.path("kind").asText(""));
      ObjectNode m = summary.putObject("metadata");
      for (String f : List.of("name", "namespace", "annotations", "labels", "finalizers")) {
        if (body.path("metadata").has(f) && !body.path("metadata").get(f).isEmpty()) {
          m.set(f, body.path("metadata").get(f));
        }
      }
      m.put("deleting", body.path("metadata").has("deletionTimestamp"));
      body = summary;
    }
    n.set("body", body == null ? Fx.MAPPER.nullNode() : body.deepCopy());
    ObjectNode obs = n.putObject("observations");
    observations.forEach((k, v) -> obs.set(k, v.deepCopy()));
    n.set("state", state == null ? Fx.MAPPER.nullNode() : state.deepCopy());
    return (ObjectNode) scrub(n);
  }

  static JsonNode scrub(JsonNode n) {
    if (n.isObject()) {
      ObjectNode o = (ObjectNode) n;
      Iterator<Map.Entry<String, JsonNode>> it = o.properties().iterator();
      List<String> keys = new ArrayList<>();
      it.forEachRemaining(e -> keys.add(e.getKey()));
      for (String k : keys) {
        JsonNode v = o.get(k);
        if (VOLATILE_KEYS.contains(k) && (v.isTextual() || v.isNumber())) {
          o.put(k, "<" + k + ">");
        } else {
          o.set(k, scrub(v));
        }
      }
      return o;
    }
    if (n.isArray()) {
      ArrayNode a = (ArrayNode) n;
      for (int i = 0; i < a.size(); i++) {
        a.set(i, scrub(a.get(i)));
      }
      return a;
    }
    if (n.isTextual()) {
      return TextNode.valueOf(scrubText(n.asText()));
    }
    return n;
  }

  static String scrubText(String s) {
    if (s.length() > LONG_TEXT) { // e.g. a 256 KiB annotation value: its length and start
      s = s.substring(0, 80) + "...<" + s.length() + " characters>";
    }
    String t = UUID.matcher(s).replaceAll("<uid>");
    t = TS.matcher(t).replaceAll("<timestamp>");
    t = RV_TEXT.matcher(t).replaceAll("$1<rv>");
    return PAREN_NUMBER.matcher(t).replaceAll("(<rv>)");
  }

  private static Observed run(Row row, Fx fx) {
    try (fx) {
      fx.prepare();
      Outcome o = row.probe().run(fx);
      return new Observed(o.code(), o.reason(), normalise(o, fx.observations(), fx.state()), null);
    } catch (Throwable t) {
      String msg = t.getClass().getSimpleName() + ": " + t.getMessage();
      ObjectNode n = Fx.MAPPER.createObjectNode();
      n.put("probe failed", scrubText(msg));
      ObjectNode obs = n.putObject("observations");
      fx.observations().forEach((k, v) -> obs.set(k, scrub(v.deepCopy())));
      return new Observed(-1, "", n, msg);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.hamilock.testkit.ConformanceTest#rows")
  void sameAnswerOnTheEmulatorAndTheRealServer(Row row, KubeBackend real) {
    Observed emu = run(row, Fx.forConformance());
    Observed onReal =
        row.emulatorOnly() != null ? null : run(row, new Fx(realFor(row, real), false));
    String version = real instanceof RealApiServer r ? r.kubernetesVersion() : "?";
    synchronized (RESULTS) {
      RESULTS.put(row.operation(), new Result(row, emu, onReal, version));
    }
    assertThat(emu.failure()).as("%s on the emulator", row).isNull();
    assertThat(emu.code()).as("%s: status on the emulator", row).isEqualTo(row.code());
    if (onReal == null) {
      return;
    }
    assertThat(onReal.failure())
        .as("%s on the real server (emulator: %s)", row, json(emu.normalised()))
        .isNull();
    assertThat(onReal.code())
        .as("%s: status on the real server: %s", row, json(onReal.normalised()))
        .isEqualTo(row.expectedCode(true));
    if (!row.expectedReason(true).isEmpty()) {
      assertThat(onReal.reason())
          .as("%s: reason on the real server", row)
          .isEqualTo(row.expectedReason(true));
    }
    if (row.difference() == null) {
      assertThat(json(emu.normalised()))
          .as("%s: emulator vs real (undocumented difference)", row)
          .isEqualTo(json(onReal.normalised()));
    } else {
      assertThat(json(emu.normalised()))
          .as("%s: the documented difference no longer shows; remove it", row)
          .isNotEqualTo(json(onReal.normalised()));
    }
  }

  static String json(JsonNode n) {
    try {
      return PRETTY.writeValueAsString(PRETTY.treeToValue(n, Object.class));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterAll
  static void writeTable() throws IOException {
    synchronized (DifferentialConformanceTest.class) {
      EXTRA.values().forEach(RealApiServer::close);
      EXTRA.clear();
    }
    List<Row> rows = ConformanceTest.rows().toList();
    synchronized (RESULTS) {
      if (RESULTS.size() != rows.size()) {
        return; // a filtered run (-Dtest=...#...) does not rewrite the table
      }
      Path out =
          Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).resolve(TABLE);
      Files.writeString(out, render(rows));
    }
  }

  static String render(List<Row> rows) {
    String version = RESULTS.values().iterator().next().kubernetesVersion();
    StringBuilder b = new StringBuilder();
    b.append("# Differential conformance: emulator vs kube-apiserver ")
        .append(version)
        .append("\n\n");
    b.append(
            "Generated by `DifferentialConformanceTest` (`mvn -B -pl testing/hami-lock-testkit -am verify -Preal-apiserver`, ")
        // no generation time: a re-run that finds the same answers leaves the tracked file as it
        // is (git log dates it)
        .append(
            "after `testing/realcluster/build`); do not edit by hand. `ConformanceTableTest` (default build) checks that it lists every row of ")
        .append("`ConformanceTest` with the verdict the row declares.\n\n");
    b.append(
            "Each row runs on a fresh `ApiServerEmulator` and on one real kube-apiserver on etcd (`RealApiServer`, ")
        .append(
            "reset before each row: nodes, pods, configmaps removed). Compared: HTTP status, Status reason, the ")
        .append(
            "answer's body (a `Status` in full: message, details, causes; an object as kind, name, namespace, ")
        .append(
            "annotations, labels, finalizers, deletion mark), the row's own observations (watch event sequences, ")
        .append(
            "list items, ...) and the stored state afterwards (nodes' annotations and labels; pods' node, ")
        .append(
            "annotations, labels, condition types; configmaps' finalizers). Normalised before comparing: the ")
        .append(
            "values of `resourceVersion`, `uid`, timestamps; uids, RFC 3339 times and numbers after ")
        .append("\"resourceVersion\" inside messages.\n\n");
    b.append("| # | row | emulator | real | same? |\n|---|-----|----------|------|-------|\n");
    int i = 0;
    List<Result> diffs = new ArrayList<>();
    List<Result> emuOnly = new ArrayList<>();
    for (Row row : rows) {
      i++;
      Result r = RESULTS.get(row.operation());
      String same = r.same();
      String verdict =
          switch (same) {
            case "yes" -> "yes";
            case "n/a" -> "n/a (emulator only, see below)";
            default ->
                row.difference() != null ? "no (documented, see below)" : "no (UNDOCUMENTED)";
          };
      if (same.equals("no")) {
        diffs.add(r);
      } else if (same.equals("n/a")) {
        emuOnly.add(r);
      }
      b.append("| ")
          .append(i)
          .append(" | ")
          .append(row.operation())
          .append(" | ")
          .append(r.emulator().cell())
          .append(" | ")
          .append(r.real() == null ? "—" : r.real().cell())
          .append(" | ")
          .append(verdict)
          .append(" |\n");
    }
    b.append("\n## Differences\n\n");
    if (diffs.isEmpty()) {
      b.append("None.\n");
    }
    for (Result r : diffs) {
      b.append("### ").append(r.row().operation()).append("\n\n");
      b.append("Why it cannot matter to hami-lock: ")
          .append(r.row().difference() == null ? "UNDOCUMENTED" : r.row().difference())
          .append("\n\nEmulator:\n\n```json\n")
          .append(json(r.emulator().normalised()))
          .append("\n```\n\nReal kube-apiserver:\n\n```json\n")
          .append(json(r.real().normalised()))
          .append("\n```\n\n");
    }
    b.append("\n## Emulator-only rows\n\n");
    for (Result r : emuOnly) {
      b.append("- ")
          .append(r.row().operation())
          .append(": ")
          .append(r.row().emulatorOnly())
          .append("\n");
    }
    b.append("\n## What the real server answered, row by row (normalised)\n\n");
    i = 0;
    for (Row row : rows) {
      i++;
      Result r = RESULTS.get(row.operation());
      Observed o = r.real() != null ? r.real() : r.emulator();
      b.append(i)
          .append(". ")
          .append(row.operation())
          .append(r.real() == null ? " (emulator)" : "")
          .append(
              row.realServerArg() == null ? "" : " (kube-apiserver " + row.realServerArg() + ")")
          .append(": `")
          .append(o.normalised().toString().replace("`", "'"))
          .append("`\n");
    }
    return b.toString();
  }
}
