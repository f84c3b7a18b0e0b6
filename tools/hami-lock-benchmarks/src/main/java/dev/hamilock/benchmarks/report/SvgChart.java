package dev.hamilock.benchmarks.report;

import dev.hamilock.benchmarks.convergence.ConvergenceResults;
import dev.hamilock.benchmarks.convergence.ScenarioSummary;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the convergence chart as a self-contained SVG: one panel per latency / replica
 * configuration, convergence time (median, log scale) against gang size N (log scale) for each
 * algorithm, min–max whiskers, and the lower bound N × hold as a dashed line.
 */
public final class SvgChart {

  private static final String[] COLORS = {
    "#d62728", "#ff7f0e", "#2ca02c", "#1f77b4", "#9467bd", "#8c564b"
  };
  private static final int PANEL_W = 460;
  private static final int PANEL_H = 320;
  private static final int MARGIN_L = 64;
  private static final int MARGIN_R = 16;
  private static final int MARGIN_T = 34;
  private static final int MARGIN_B = 46;
  private static final int LEGEND_H = 28;

  private SvgChart() {}

  /**
   * @param title chart title (machine and date)
   */
  public static String render(ConvergenceResults results, String title) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (ScenarioSummary s : results.summaries()) {
      labels.putIfAbsent(s.algorithmKey(), s.algorithmLabel());
    }
    List<int[]> configs = new ArrayList<>();
    for (ScenarioSummary s : results.summaries()) {
      int[] c = {s.scenario().latencyMs(), s.scenario().replicas()};
      if (configs.stream().noneMatch(x -> x[0] == c[0] && x[1] == c[1])) {
        configs.add(c);
      }
    }
    int cols = Math.min(2, configs.size());
    int rows = (configs.size() + cols - 1) / cols;
    int width = cols * PANEL_W;
    int legendRows = (labels.size() + 2) / 2;
    int height = 40 + rows * PANEL_H + legendRows * LEGEND_H + 10;
    StringBuilder b = new StringBuilder();
    b.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n",
            width,
            height,
            width,
            height));
    b.append(
        String.format(
            Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
    b.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">%s</text>%n",
            width / 2,
            esc(title)));
    for (int i = 0; i < configs.size(); i++) {
      int ox = (i % cols) * PANEL_W;
      int oy = 40 + (i / cols) * PANEL_H;
      panel(b, results, configs.get(i)[0], configs.get(i)[1], labels, ox, oy);
    }
    int ly = 40 + rows * PANEL_H + 8;
    int k = 0;
    for (Map.Entry<String, String> e : labels.entrySet()) {
      int lx = 20 + (k % 2) * (width / 2);
      int y = ly + (k / 2) * LEGEND_H;
      String color = COLORS[k % COLORS.length];
      b.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2.5\"/>"
                  + "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"%s\"/>"
                  + "<text x=\"%d\" y=\"%d\">%s</text>%n",
              lx,
              y,
              lx + 28,
              y,
              color,
              lx + 14,
              y,
              color,
              lx + 36,
              y + 4,
              esc(e.getValue())));
      k++;
    }
    int y = ly + (k / 2) * LEGEND_H;
    int lx = 20 + (k % 2) * (width / 2);
    b.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\" "
                + "stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/><text x=\"%d\" y=\"%d\">lower bound N × hold</text>%n",
            lx,
            y,
            lx + 28,
            y,
            lx + 36,
            y + 4));
    b.append("</svg>\n");
    return b.toString();
  }

  private static void panel(
      StringBuilder b,
      ConvergenceResults results,
      int latency,
      int replicas,
      Map<String, String> labels,
      int ox,
      int oy) {
    List<ScenarioSummary> rows =
        results.summaries().stream()
            .filter(
                s ->
                    s.scenario().singleNode()
                        && s.scenario().latencyMs() == latency
                        && s.scenario().replicas() == replicas)
            .toList();
    double xMin = Math.log(2);
    double xMax = Math.log(32);
    List<Integer> ns = rows.stream().map(s -> s.scenario().gangSize()).distinct().sorted().toList();
    if (!ns.isEmpty()) {
      xMin = Math.log(ns.get(0));
      xMax = Math.log(ns.get(ns.size() - 1));
    }
    if (xMax <= xMin) {
      xMax = xMin + 1;
    }
    double yLo = Double.MAX_VALUE;
    double yHi = 0;
    for (ScenarioSummary s : rows) {
      if (!s.timesMs().isEmpty()) {
        yLo = Math.min(yLo, Math.min(s.minMs(), s.lowerBoundMs()));
        yHi = Math.max(yHi, s.maxMs());
      }
      yLo = Math.min(yLo, s.lowerBoundMs());
      yHi = Math.max(yHi, s.lowerBoundMs());
    }
    if (yHi <= 0) {
      yLo = 10;
      yHi = 1000;
    }
    double lo = Math.floor(Math.log10(Math.max(yLo, 1e-3)));
    double hi = Math.ceil(Math.log10(yHi));
    if (hi <= lo) {
      hi = lo + 1;
    }
    int x0 = ox + MARGIN_L;
    int x1 = ox + PANEL_W - MARGIN_R;
    int y0 = oy + PANEL_H - MARGIN_B;
    int y1 = oy + MARGIN_T;
    final double fxMin = xMin;
    final double fxMax = xMax;
    final double flo = lo;
    final double fhi = hi;
    java.util.function.DoubleUnaryOperator px =
        n -> x0 + (Math.log(n) - fxMin) / (fxMax - fxMin) * (x1 - x0);
    java.util.function.DoubleUnaryOperator py =
        ms -> y0 - (Math.log10(ms) - flo) / (fhi - flo) * (y0 - y1);
    b.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">"
                + "one node, latency %d ms, %d scheduler replica%s</text>%n",
            (x0 + x1) / 2,
            oy + 18,
            latency,
            replicas,
            replicas == 1 ? "" : "s"));
    b.append(
        String.format(
            Locale.ROOT,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#999\"/>%n",
            x0,
            y1,
            x1 - x0,
            y0 - y1));
    for (int e = (int) lo; e <= (int) hi; e++) {
      double v = Math.pow(10, e);
      int y = (int) Math.round(py.applyAsDouble(v));
      b.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                  + "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n",
              x0,
              y,
              x1,
              y,
              x0 - 6,
              y + 4,
              v >= 1 ? String.valueOf((long) v) : String.valueOf(v)));
    }
    for (int n : ns) {
      int x = (int) Math.round(px.applyAsDouble(n));
      b.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>"
                  + "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>%n",
              x,
              y1,
              x,
              y0,
              x,
              y0 + 16,
              n));
    }
    b.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">gang size N</text>%n",
            (x0 + x1) / 2,
            y0 + 34));
    b.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\">"
                + "convergence, ms (median, log)</text>%n",
            ox + 16,
            (y0 + y1) / 2,
            ox + 16,
            (y0 + y1) / 2));
    StringBuilder bound = new StringBuilder();
    for (int n : ns) {
      rows.stream()
          .filter(s -> s.scenario().gangSize() == n)
          .findFirst()
          .ifPresent(
              s ->
                  bound.append(
                      String.format(
                          Locale.ROOT,
                          "%s%.1f,%.1f",
                          bound.length() == 0 ? "" : " ",
                          px.applyAsDouble(n),
                          py.applyAsDouble(s.lowerBoundMs()))));
    }
    b.append(
        String.format(
            Locale.ROOT,
            "<polyline points=\"%s\" fill=\"none\" stroke=\"black\" "
                + "stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>%n",
            bound));
    int k = 0;
    for (String key : labels.keySet()) {
      String color = COLORS[k++ % COLORS.length];
      StringBuilder line = new StringBuilder();
      for (ScenarioSummary s : rows) {
        if (!s.algorithmKey().equals(key) || s.timesMs().isEmpty()) {
          continue;
        }
        double x = px.applyAsDouble(s.scenario().gangSize());
        line.append(
            String.format(
                Locale.ROOT,
                "%s%.1f,%.1f",
                line.length() == 0 ? "" : " ",
                x,
                py.applyAsDouble(s.medianMs())));
        b.append(
            String.format(
                Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    + "stroke-width=\"1\"/>%n",
                x,
                py.applyAsDouble(s.minMs()),
                x,
                py.applyAsDouble(s.maxMs()),
                color));
        b.append(
            String.format(
                Locale.ROOT,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s: "
                    + "median %.1f ms, p90 %.1f ms</title></circle>%n",
                x,
                py.applyAsDouble(s.medianMs()),
                color,
                esc(s.algorithmLabel() + ", " + s.scenario().describe()),
                s.medianMs(),
                s.p90Ms()));
      }
      if (line.length() > 0) {
        b.append(
            String.format(
                Locale.ROOT,
                "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" " + "stroke-width=\"2.5\"/>%n",
                line,
                color));
      }
    }
  }

  static String esc(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
