package dev.hamilock.preflight;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.hamilock.preflight.check.Finding;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Renders a {@link PreflightReport} as a text table or as JSON. */
final class ReportWriter {

  private ReportWriter() {}

  /**
   * Text form: one block per finding (severity, check, location; then message and fix indented),
   * followed by a summary line.
   */
  static String table(PreflightReport report) {
    StringBuilder sb = new StringBuilder();
    String files =
        report.sources().size()
            + " file"
            + (report.sources().size() == 1 ? "" : "s")
            + ", "
            + report.documents()
            + " document"
            + (report.documents() == 1 ? "" : "s");
    if (report.findings().isEmpty()) {
      return sb.append("No findings (")
          .append(files)
          .append(").")
          .append(System.lineSeparator())
          .toString();
    }
    // several set-ups: one table per set-up, headed by its name
    Map<String, List<Finding>> bySetUp = new LinkedHashMap<>();
    report
        .findings()
        .forEach(f -> bySetUp.computeIfAbsent(f.setUp(), k -> new ArrayList<>()).add(f));
    bySetUp.forEach(
        (setUp, findings) -> {
          if (!setUp.isEmpty()) {
            sb.append(sb.length() == 0 ? "" : System.lineSeparator())
                .append("SET-UP ")
                .append(setUp)
                .append(System.lineSeparator());
          }
          FindingFormat.appendTable(sb, findings, 36, "LOCATION", f -> f.location().describe());
        });
    sb.append(System.lineSeparator())
        .append(
            String.format(
                Locale.ROOT,
                "%d finding%s: %s (%s).%n",
                report.findings().size(),
                report.findings().size() == 1 ? "" : "s",
                FindingFormat.severityCounts(report::count),
                files));
    return sb.toString();
  }

  /**
   * JSON form: {@code {"files": [..], "documents": n, "summary": {"error": n, "warning": n, "info":
   * n}, "findings": [{"check", "name", "severity", "setUp" (absent when the inputs were one set),
   * "file", "document", "path", "line" (absent when unknown), "message", "fix"}]}}.
   */
  static String json(PreflightReport report) {
    JsonObject root = new JsonObject();
    JsonArray files = new JsonArray();
    report.sources().forEach(files::add);
    root.add("files", files);
    root.addProperty("documents", report.documents());
    root.add("summary", FindingFormat.severitySummary(report::count));
    JsonArray findings = new JsonArray();
    for (Finding f : report.findings()) {
      findings.add(
          FindingFormat.findingJson(
              f,
              (o, g) -> {
                if (!g.setUp().isEmpty()) {
                  o.addProperty("setUp", g.setUp());
                }
                o.addProperty("file", g.location().source());
                o.addProperty("document", g.location().document());
                o.addProperty("path", g.location().path());
                g.location().line().ifPresent(l -> o.addProperty("line", l));
              }));
    }
    root.add("findings", findings);
    return FindingFormat.pretty(root);
  }
}
