package dev.hamilock.examples.gang.report;

import dev.hamilock.examples.gang.DemoOptions;
import dev.hamilock.examples.gang.DemoResult;
import dev.hamilock.examples.gang.run.MemberResult;
import dev.hamilock.examples.gang.run.ModeResult;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The human-readable report: per-pod tables, time to bound, API requests, the checks, side by side.
 */
public final class TextReport {
  private TextReport() {}

  /**
   * @param r the result
   * @param options the options used
   * @param out where to print
   */
  public static void render(DemoResult r, DemoOptions options, PrintStream out) {
    out.println("hami-lock gang demo");
    if (!r.summary().isEmpty()) {
      out.println("input: " + r.summary());
    }
    for (String w : r.warnings()) {
      out.println("WARNING: " + w);
    }
    for (String p : r.plan()) {
      out.println(p);
    }
    for (ModeResult m : r.runs()) {
      out.println();
      out.println(title(m));
      out.println("backend: " + m.backend());
      table(m, out);
      out.println(timeLine(m));
      out.println(
          m.requestsByVerb().isEmpty()
              ? "API requests by verb: not counted (a cluster reached by --kubeconfig)"
              : "API requests by verb: "
                  + m.requestsByVerb().entrySet().stream()
                      .map(e -> e.getKey() + " " + e.getValue())
                      .collect(Collectors.joining(", "))
                  + " (total "
                  + m.totalRequests()
                  + ")");
      out.println("overlap check: " + check(m));
    }
    if (r.gang().isPresent() && r.failFast().isPresent()) {
      out.println();
      sideBySide(r.gang().get(), r.failFast().get(), out);
    }
    options
        .timeline()
        .ifPresent(
            t -> {
              if (!r.runs().isEmpty()) {
                out.println();
                out.println("timeline: " + t + " (open it in a browser)");
              }
            });
    if (!r.errors().isEmpty()) {
      out.println();
      r.errors().forEach(e -> out.println("ERROR: " + e));
    }
    out.println();
    out.println("exit code " + r.exitCode());
  }

  static String title(ModeResult m) {
    return switch (m.mode()) {
      case GANG ->
          "== gang: hami-lock's bind flow, gang members wait for the node lock (HAMi gang retry) ==";
      case FAIL_FAST ->
          "== fail-fast: no gang retry, contended pods re-queued with kube-scheduler backoff (1s doubling to 10s) ==";
      case BOTH -> "== " + m.mode() + " ==";
    };
  }

  private static void table(ModeResult m, PrintStream out) {
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "POD",
          "REPLICA",
          "NODE",
          "GPU UUID(S)",
          "MiB",
          "CORES",
          "LOCK WAIT ms",
          "ATTEMPTS",
          "BINDS",
          "RESULT"
        });
    for (MemberResult p : m.members()) {
      rows.add(
          new String[] {
            p.pod(),
            String.valueOf(p.replica()),
            p.node().isEmpty() ? "-" : p.node(),
            p.gpuUuids().isEmpty() ? "-" : String.join(",", p.gpuUuids()),
            String.valueOf(p.memoryMiB()),
            String.valueOf(p.cores()),
            ms(p.lockWaitMs()),
            String.valueOf(p.lockAttempts()),
            String.valueOf(p.binds()),
            p.result() + (p.gangMember() ? "" : " (not a gang member)")
          });
    }
    int[] w = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        w[i] = Math.max(w[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < row.length; i++) {
        boolean numeric = i == 1 || (i >= 4 && i <= 8);
        String cell =
            numeric
                ? " ".repeat(w[i] - row[i].length()) + row[i]
                : row[i] + " ".repeat(w[i] - row[i].length());
        b.append(cell).append(i + 1 < row.length ? "  " : "");
      }
      out.println(b.toString().stripTrailing());
    }
  }

  static String timeLine(ModeResult m) {
    String zero = "from " + m.timeZero();
    return "time to fully bound ("
        + zero
        + "): "
        + m.timeToBoundMs()
            .map(TextReport::ms)
            .map(s -> s + " ms")
            .orElse("never (not every pod was bound)")
        + m.timeToAllocatedMs()
            .map(a -> "; every device-plugin hand-off done (lock released): " + ms(a) + " ms")
            .orElse("");
  }

  static String check(ModeResult m) {
    long bound = m.members().stream().filter(MemberResult::bound).count();
    if (m.violations().isEmpty() && m.locksLeft().isEmpty()) {
      return "OK: no overlapping slices (every GPU's memory, cores and slots within capacity in the device plugins' "
          + "ledger and in the pods' annotations), "
          + bound
          + "/"
          + m.members().size()
          + " pods bound, no lock left held";
    }
    List<String> out = new ArrayList<>(m.violations());
    m.locksLeft().forEach(l -> out.add("lock left held: " + l));
    return "FAILED: " + String.join("; ", out);
  }

  private static void sideBySide(ModeResult gang, ModeResult ff, PrintStream out) {
    out.println("== side by side ==");
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"", "gang", "fail-fast"});
    rows.add(
        row(
            "pods bound",
            gang,
            ff,
            m ->
                m.members().stream().filter(MemberResult::bound).count()
                    + "/"
                    + m.members().size()));
    rows.add(
        row(
            "time to fully bound",
            gang,
            ff,
            m -> m.timeToBoundMs().map(v -> ms(v) + " ms").orElse("never")));
    rows.add(
        row(
            "hand-offs done",
            gang,
            ff,
            m -> m.timeToAllocatedMs().map(v -> ms(v) + " ms").orElse("-")));
    rows.add(
        row(
            "bind calls",
            gang,
            ff,
            m -> String.valueOf(m.members().stream().mapToInt(MemberResult::binds).sum())));
    rows.add(
        row(
            "lock attempts",
            gang,
            ff,
            m -> String.valueOf(m.members().stream().mapToInt(MemberResult::lockAttempts).sum())));
    rows.add(
        row(
            "max lock wait",
            gang,
            ff,
            m ->
                ms(m.members().stream().mapToDouble(MemberResult::lockWaitMs).max().orElse(0))
                    + " ms"));
    rows.add(row("API requests", gang, ff, m -> String.valueOf(m.totalRequests())));
    rows.add(
        row(
            "overlap check",
            gang,
            ff,
            m -> m.violations().isEmpty() && m.locksLeft().isEmpty() ? "OK" : "FAILED"));
    int w0 = rows.stream().mapToInt(r -> r[0].length()).max().orElse(0);
    int w1 = rows.stream().mapToInt(r -> r[1].length()).max().orElse(0);
    for (String[] r : rows) {
      out.println(
          (r[0]
                  + " ".repeat(w0 - r[0].length())
                  + "  "
                  + r[1]
                  + " ".repeat(w1 - r[1].length())
                  + "  "
                  + r[2])
              .stripTrailing());
    }
    out.println(comparison(gang, ff));
  }

  /**
   * The side-by-side verdict, stated only as far as the two runs support it.
   *
   * @param gang the gang-mode run
   * @param ff the fail-fast run
   * @return one line: "N.Nx faster" only when gang mode bound every pod sooner, "slower" when
   *     later, and no speed claim when no pod is a gang member (both modes then bind fail-fast) or
   *     a run did not bind every pod
   */
  static String comparison(ModeResult gang, ModeResult ff) {
    Optional<Double> g = gang.timeToBoundMs();
    Optional<Double> f = ff.timeToBoundMs();
    if (gang.members().stream().noneMatch(MemberResult::gangMember)) {
      return "no pod is a gang member, so there is no gang to compare: both modes bound the pods one by one, "
          + "contended pods failing fast and re-queueing (time to fully bound "
          + g.map(v -> ms(v) + " ms").orElse("never")
          + " vs "
          + f.map(v -> ms(v) + " ms").orElse("never")
          + ", a difference of chance)";
    }
    if (g.isEmpty() || f.isEmpty()) {
      return g.isPresent()
          ? "gang-aware binding bound every pod; fail-fast re-queueing did not"
          : f.isPresent()
              ? "gang-aware binding did not bind every pod; fail-fast re-queueing did"
              : "neither mode bound every pod";
    }
    double gv = g.get();
    double fv = f.get();
    if (gv < fv) {
      return String.format(
          Locale.ROOT,
          "gang-aware binding bound the gang %s faster than fail-fast re-queueing "
              + "(%s ms vs %s ms)",
          ratio(fv, gv),
          ms(gv),
          ms(fv));
    }
    if (gv > fv) {
      return String.format(
          Locale.ROOT,
          "gang-aware binding was slower than fail-fast re-queueing this time "
              + "(%s ms vs %s ms, %s as long)",
          ms(gv),
          ms(fv),
          ratio(gv, fv));
    }
    return "gang-aware binding and fail-fast re-queueing bound every pod at the same time ("
        + ms(gv)
        + " ms)";
  }

  /**
   * @return {@code big / small} as {@code 27x} or, below 10, {@code 1.3x}; {@code small} > 0
   *     assumed
   */
  private static String ratio(double big, double small) {
    if (small <= 0) {
      return "immeasurably";
    }
    double r = big / small;
    return String.format(Locale.ROOT, r >= 10 ? "%.0fx" : "%.1fx", r);
  }

  private static String[] row(
      String label, ModeResult a, ModeResult b, Function<ModeResult, String> f) {
    return new String[] {label, f.apply(a), f.apply(b)};
  }

  /**
   * @param v milliseconds
   * @return one decimal, e.g. {@code 12.3}
   */
  public static String ms(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }
}
