package dev.hamilock.examples.gang.report;

import dev.hamilock.examples.gang.real.ExtenderMode;
import dev.hamilock.examples.gang.real.RealClusterDemo;
import dev.hamilock.examples.gang.real.RealSchedulerCluster;
import dev.hamilock.examples.gang.real.Scenario;
import dev.hamilock.examples.gang.real.ScenarioRun;
import java.util.List;
import java.util.Locale;
import java.util.function.ToLongFunction;

/**
 * The real-scheduler chart ({@code gang-demo --real-cluster --chart FILE}) as a self-contained SVG:
 * one panel per scenario, one bar per mode — gang retry, fail-fast and the floor — at the median
 * time to all Running in ms on one shared log scale (equal ratios, equal distances), a min–max
 * whisker over the rounds, the value and its ratio to the floor above each bar. The floor's bar is
 * stacked: kube-scheduler alone (the floor run) and the lock's serial hand-offs added to it ({@code
 * (pods on the busiest node - 1) × }{@link RealSchedulerCluster#ALLOCATE_MS}, {@code
 * class="hold"}). Each bar has {@code class="bar"}, {@code data-scenario}, {@code data-mode} and
 * {@code data-ms}.
 */
public final class RealSchedulerChart {
  private static final List<ExtenderMode> MODES =
      List.of(ExtenderMode.GANG_RETRY, ExtenderMode.FAIL_FAST, ExtenderMode.FLOOR);
  private static final String[] COLOUR = {"#4e79a7", "#f28e2b", "#59a14f"};
  private static final String HOLD_COLOUR = "#b5d9a8";
  private static final int PANEL = 300;
  private static final int LEFT = 70;
  private static final int TOP = 70;
  private static final int PLOT = 320;
  private static final int BAR = 56;

  private RealSchedulerChart() {}

  /**
   * @param runs the runs of {@code --real-cluster}; scenarios without a gang-retry run are left
   *     out, a mode without runs or with a failed run gets no bar (its label says why)
   * @param title the chart's title (date, machine)
   * @return the SVG document
   */
  public static String render(List<ScenarioRun> runs, String title) {
    List<Scenario> shown =
        Scenario.ALL.stream()
            .filter(s -> !RealClusterDemo.runs(runs, s, ExtenderMode.GANG_RETRY).isEmpty())
            .toList();
    long hi = 1000;
    for (ScenarioRun r : runs) {
      hi = Math.max(hi, time(r.mode()).applyAsLong(r));
    }
    // the axis runs from 100 ms to twice the longest bar or whisker: room for the labels above it
    double decades = Math.log10(2.0 * hi) - 2;
    int width = LEFT + Math.max(1, shown.size()) * PANEL + 20;
    int bottom = TOP + PLOT;
    StringBuilder b = new StringBuilder();
    b.append(TimelineSvg.text(width / 2.0, 24, "middle", "title", title));
    double load = runs.stream().mapToDouble(ScenarioRun::loadAverage).max().orElse(Double.NaN);
    double loadLo = runs.stream().mapToDouble(ScenarioRun::loadAverage).min().orElse(Double.NaN);
    b.append(
        TimelineSvg.text(
            width / 2.0,
            44,
            "middle",
            "label",
            String.format(
                Locale.ROOT,
                "bars: median of the rounds, whiskers: min–max; load average %.1f–%.1f at the runs'"
                    + " starts",
                loadLo,
                load)));
    for (int e = 2; e <= 2 + decades; e++) {
      double y = y(Math.pow(10, e), decades);
      b.append(
          String.format(
              Locale.ROOT,
              "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>",
              LEFT,
              y,
              width - 20,
              y));
      b.append(
          TimelineSvg.text(
              LEFT - 6,
              y + 4,
              "end",
              "tick",
              e < 3 ? "100 ms" : (long) Math.pow(10, e - 3) + " s"));
    }
    b.append(
        String.format(
            Locale.ROOT,
            "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" class=\"label\" transform=\"rotate(-90"
                + " 16 %d)\">time to all Running (log scale)</text>%n",
            TOP + PLOT / 2,
            TOP + PLOT / 2));
    for (int i = 0; i < shown.size(); i++) {
      panel(b, runs, shown.get(i), LEFT + i * PANEL, decades);
    }
    b.append(
        String.format(
            Locale.ROOT,
            "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>",
            LEFT,
            bottom,
            width - 20,
            bottom));
    int ly = bottom + 62;
    String[] legend = {
      "gang retry (extender, --node-lock-retry-timeout=28s)",
      "fail-fast (extender, =0: kube-scheduler's backoff)",
      "floor: kube-scheduler alone, no extender, no lock",
      "+ (pods on the busiest node − 1) × " + RealSchedulerCluster.ALLOCATE_MS + " ms lock hold"
    };
    for (int k = 0; k < legend.length; k++) {
      int x = LEFT + (k % 2) * 430;
      int y = ly + (k / 2) * 20;
      b.append(
          String.format(
              Locale.ROOT,
              "<rect class=\"legend\" x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>",
              x,
              y - 11,
              k < 3 ? COLOUR[k] : HOLD_COLOUR));
      b.append(TimelineSvg.text(x + 20, y, "start", "label", legend[k]));
    }
    int height = ly + 40;
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        + String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d"
                + " %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">%n",
            width,
            height,
            width,
            height)
        + "<style>.title{font-size:15px;font-weight:bold}.panel{font-size:13px;font-weight:bold}"
        + ".label{font-size:11px;fill:#222}.tick{font-size:10px;fill:#555}"
        + ".axis{stroke:#888;stroke-width:1}.grid{stroke:#e4e4e4;stroke-width:1}"
        + ".whisker{stroke:#222;stroke-width:1.2}</style>\n"
        + "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        + b
        + "</svg>\n";
  }

  private static void panel(
      StringBuilder b, List<ScenarioRun> runs, Scenario s, int x0, double decades) {
    b.append(TimelineSvg.text(x0 + PANEL / 2.0, TOP - 8, "middle", "panel", s.title()));
    List<ScenarioRun> floor = RealClusterDemo.runs(runs, s, ExtenderMode.FLOOR);
    boolean floorOk = !floor.isEmpty() && floor.stream().allMatch(ScenarioRun::ok);
    long floorMs = floorOk ? RealClusterDemo.median(floor, ScenarioRun::floorMs) : -1;
    for (int m = 0; m < MODES.size(); m++) {
      ExtenderMode mode = MODES.get(m);
      List<ScenarioRun> rs = RealClusterDemo.runs(runs, s, mode);
      double x = x0 + 30 + m * (BAR + 30);
      double bottom = TOP + PLOT;
      b.append(TimelineSvg.text(x + BAR / 2.0, bottom + 16, "middle", "label", mode.label()));
      if (rs.isEmpty() || !rs.stream().allMatch(ScenarioRun::ok)) {
        b.append(
            TimelineSvg.text(
                x + BAR / 2.0,
                bottom - 8,
                "middle",
                "tick",
                rs.isEmpty() ? "not run" : "a run failed"));
        continue;
      }
      ToLongFunction<ScenarioRun> time = time(mode);
      long median = RealClusterDemo.median(rs, time);
      long lo = rs.stream().mapToLong(time).min().orElseThrow();
      long hi = rs.stream().mapToLong(time).max().orElseThrow();
      double top = y(median, decades);
      b.append(
          String.format(
              Locale.ROOT,
              "<rect class=\"bar\" data-scenario=\"%s\" data-mode=\"%s\" data-ms=\"%d\" x=\"%.1f\""
                  + " y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s</title></rect>%n",
              s.name(),
              TimelineSvg.esc(mode.label()),
              median,
              x,
              top,
              BAR,
              bottom - top,
              COLOUR[m],
              TimelineSvg.esc(
                  s.name()
                      + " "
                      + mode.label()
                      + ": median "
                      + median
                      + " ms of "
                      + rs.size()
                      + " run(s), "
                      + lo
                      + "–"
                      + hi
                      + " ms")));
      if (mode == ExtenderMode.FLOOR) {
        double runTop = y(RealClusterDemo.median(rs), decades);
        b.append(
            String.format(
                Locale.ROOT,
                "<rect class=\"hold\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\""
                    + " fill=\"%s\"><title>%s</title></rect>%n",
                x,
                top,
                BAR,
                Math.max(0, runTop - top),
                HOLD_COLOUR,
                TimelineSvg.esc(
                    "(" + rs.get(0).busiestNodePods() + " - 1) x 20 ms lock hold added")));
      }
      b.append(
          String.format(
              Locale.ROOT,
              "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>%n",
              x + BAR / 2.0,
              y(lo, decades),
              x + BAR / 2.0,
              y(hi, decades)));
      String value =
          String.format(Locale.ROOT, median >= 10_000 ? "%.1f s" : "%.2f s", median / 1000.0);
      double labelY = Math.min(top, y(hi, decades)) - 6;
      if (mode != ExtenderMode.FLOOR && floorMs > 0) {
        b.append(
            TimelineSvg.text(
                x + BAR / 2.0,
                labelY,
                "middle",
                "label",
                String.format(Locale.ROOT, "%.2f× floor", (double) median / floorMs)));
        labelY -= 14;
      }
      b.append(TimelineSvg.text(x + BAR / 2.0, labelY, "middle", "label", value));
    }
  }

  private static ToLongFunction<ScenarioRun> time(ExtenderMode mode) {
    return mode == ExtenderMode.FLOOR ? ScenarioRun::floorMs : ScenarioRun::runningMs;
  }

  private static double y(double ms, double decades) {
    double v = Math.max(100, ms);
    return TOP + PLOT - (Math.log10(v) - 2) / decades * PLOT;
  }
}
