package dev.hamilock.preflight;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import java.util.Locale;

/** Renders a {@link PreflightReport} as a text table or as JSON. */
final class ReportWriter {

    private ReportWriter() {
    }

    /**
     * Text form: one block per finding (severity, check, location; then message and fix
     * indented), followed by a summary line.
     */
    static String table(PreflightReport report) {
        StringBuilder sb = new StringBuilder();
        String files = report.sources().size() + " file" + (report.sources().size() == 1 ? "" : "s") + ", "
                + report.documents() + " document" + (report.documents() == 1 ? "" : "s");
        if (report.findings().isEmpty()) {
            return sb.append("No findings (").append(files).append(").").append(System.lineSeparator()).toString();
        }
        sb.append(String.format(Locale.ROOT, "%-8s  %-36s  %s%n", "SEVERITY", "CHECK", "LOCATION"));
        for (Finding f : report.findings()) {
            sb.append(String.format(Locale.ROOT, "%-8s  %-36s  %s%n", f.severity(), f.checkId() + " " + f.checkName(),
                    f.location().describe()));
            sb.append("          ").append(f.message()).append(System.lineSeparator());
            if (!f.fix().isEmpty()) {
                sb.append("          fix: ").append(f.fix()).append(System.lineSeparator());
            }
        }
        sb.append(System.lineSeparator()).append(String.format(Locale.ROOT, "%d finding%s: %d error%s, %d warning%s, %d info (%s).%n",
                report.findings().size(), report.findings().size() == 1 ? "" : "s",
                report.count(Severity.ERROR), report.count(Severity.ERROR) == 1 ? "" : "s",
                report.count(Severity.WARNING), report.count(Severity.WARNING) == 1 ? "" : "s",
                report.count(Severity.INFO), files));
        return sb.toString();
    }

    /**
     * JSON form: {@code {"files": [..], "documents": n, "summary": {"error": n, "warning": n,
     * "info": n}, "findings": [{"check", "name", "severity", "file", "document", "path",
     * "line" (absent when unknown), "message", "fix"}]}}.
     */
    static String json(PreflightReport report) {
        JsonObject root = new JsonObject();
        JsonArray files = new JsonArray();
        report.sources().forEach(files::add);
        root.add("files", files);
        root.addProperty("documents", report.documents());
        JsonObject summary = new JsonObject();
        for (Severity s : Severity.values()) {
            summary.addProperty(s.name().toLowerCase(Locale.ROOT), report.count(s));
        }
        root.add("summary", summary);
        JsonArray findings = new JsonArray();
        for (Finding f : report.findings()) {
            JsonObject o = new JsonObject();
            o.addProperty("check", f.checkId());
            o.addProperty("name", f.checkName());
            o.addProperty("severity", f.severity().name());
            o.addProperty("file", f.location().source());
            o.addProperty("document", f.location().document());
            o.addProperty("path", f.location().path());
            f.location().line().ifPresent(l -> o.addProperty("line", l));
            o.addProperty("message", f.message());
            o.addProperty("fix", f.fix());
            findings.add(o);
        }
        root.add("findings", findings);
        return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(root) + System.lineSeparator();
    }
}
