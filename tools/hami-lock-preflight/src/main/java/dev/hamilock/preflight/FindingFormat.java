package dev.hamilock.preflight;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import java.util.Locale;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Text and JSON pieces shared by the reports that list {@link Finding}s (the preflight report and
 * the doctor's report), so both render a finding the same way.
 */
public final class FindingFormat {

  private static final String NL = System.lineSeparator();

  private FindingFormat() {}

  /**
   * Appends a findings table: a header line {@code SEVERITY CHECK <whereTitle>}, then per finding a
   * row (severity, "id name" padded to {@code checkWidth} characters, where) followed by the
   * message and, when not empty, {@code fix:} indented by ten spaces.
   *
   * @param sb the text to append to
   * @param findings the findings, in order
   * @param checkWidth width of the CHECK column in characters
   * @param whereTitle title of the last column
   * @param where the last column's text for a finding
   */
  public static void appendTable(
      StringBuilder sb,
      Iterable<Finding> findings,
      int checkWidth,
      String whereTitle,
      Function<Finding, String> where) {
    String row = "%-8s  %-" + checkWidth + "s  %s%n";
    sb.append(String.format(Locale.ROOT, row, "SEVERITY", "CHECK", whereTitle));
    for (Finding f : findings) {
      sb.append(
          String.format(
              Locale.ROOT, row, f.severity(), f.checkId() + " " + f.checkName(), where.apply(f)));
      sb.append("          ").append(f.message()).append(NL);
      if (!f.fix().isEmpty()) {
        sb.append("          fix: ").append(f.fix()).append(NL);
      }
    }
  }

  /**
   * @param count findings per severity
   * @return {@code "<n> error(s), <n> warning(s), <n> info"}
   */
  public static String severityCounts(ToLongFunction<Severity> count) {
    long errors = count.applyAsLong(Severity.ERROR);
    long warnings = count.applyAsLong(Severity.WARNING);
    return String.format(
        Locale.ROOT,
        "%d error%s, %d warning%s, %d info",
        errors,
        errors == 1 ? "" : "s",
        warnings,
        warnings == 1 ? "" : "s",
        count.applyAsLong(Severity.INFO));
  }

  /**
   * @param count findings per severity
   * @return {@code {"error": n, "warning": n, "info": n}} (every {@link Severity}, lower case)
   */
  public static JsonObject severitySummary(ToLongFunction<Severity> count) {
    JsonObject summary = new JsonObject();
    for (Severity s : Severity.values()) {
      summary.addProperty(s.name().toLowerCase(Locale.ROOT), count.applyAsLong(s));
    }
    return summary;
  }

  /**
   * @param f a finding
   * @param location adds the location's properties (placed after {@code severity})
   * @return {@code {"check", "name", "severity", <location...>, "message", "fix"}}
   */
  public static JsonObject findingJson(Finding f, BiConsumer<JsonObject, Finding> location) {
    JsonObject o = new JsonObject();
    o.addProperty("check", f.checkId());
    o.addProperty("name", f.checkName());
    o.addProperty("severity", f.severity().name());
    location.accept(o, f);
    o.addProperty("message", f.message());
    o.addProperty("fix", f.fix());
    return o;
  }

  /**
   * @param root a JSON document
   * @return it pretty-printed without HTML escaping, ending in a line separator
   */
  public static String pretty(JsonElement root) {
    return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(root) + NL;
  }
}
