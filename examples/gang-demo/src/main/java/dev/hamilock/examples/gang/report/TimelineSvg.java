package dev.hamilock.examples.gang.report;

import dev.hamilock.examples.gang.run.LockTimeline;
import dev.hamilock.examples.gang.run.MemberResult;
import dev.hamilock.examples.gang.run.ModeResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A Gantt chart of who held each node lock when, as a self-contained SVG: one panel per run (gang,
 * fail-fast), one row per node and lock key, one bar per lock hold ({@code class="hold"}) from the
 * acquiring write to the releasing write, coloured per pod, with a legend, an axis in ms since time
 * zero (Coscheduling's Permit release, or the first Filter when no pod is a gang member), and a
 * dashed line at the Permit release. Each bar has a {@code <title>} tooltip (pod, times, who
 * acquired and released).
 */
public final class TimelineSvg {
  private static final String[] PALETTE = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac"
  };
  private static final int WIDTH = 960;
  private static final int LEFT = 190;
  private static final int RIGHT = 30;
  private static final int ROW = 34;
  private static final int BAR = 20;

  private TimelineSvg() {}

  /**
   * @param runs the runs to draw, one panel each
   * @return the SVG document
   */
  public static String render(List<ModeResult> runs) {
    Map<String, String> colour = new LinkedHashMap<>();
    for (ModeResult m : runs) {
      for (MemberResult p : m.members()) {
        colour.putIfAbsent(p.pod(), PALETTE[colour.size() % PALETTE.length]);
      }
    }
    StringBuilder body = new StringBuilder();
    int y = 20;
    body.append(
        text(
            LEFT,
            y,
            "start",
            "title",
            "Node-lock holds (hami.io/mutex.lock): who held the lock when"));
    y += 16;
    for (ModeResult m : runs) {
      y = panel(body, m, colour, y + 20);
    }
    // legend
    y += 10;
    body.append(text(20, y + 12, "start", "label", "pods:"));
    int x = 70;
    for (Map.Entry<String, String> e : colour.entrySet()) {
      String label = e.getKey();
      int w = 24 + label.length() * 7;
      if (x + w > WIDTH - RIGHT) {
        x = 70;
        y += 20;
      }
      body.append(
          String.format(
              Locale.ROOT,
              "<rect class=\"legend\" x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>",
              x,
              y + 1,
              e.getValue()));
      body.append(text(x + 19, y + 12, "start", "label", label));
      x += w + 10;
    }
    y += 30;
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        + String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">%n",
            WIDTH,
            y,
            WIDTH,
            y)
        + "<style>.title{font-size:15px;font-weight:bold}.panel{font-size:13px;font-weight:bold}"
        + ".label{font-size:11px;fill:#222}.tick{font-size:10px;fill:#555}.axis{stroke:#888;stroke-width:1}"
        + ".grid{stroke:#e4e4e4;stroke-width:1}.zero{stroke:#c00;stroke-width:1.2;stroke-dasharray:4 3}"
        + ".hold{stroke:#333;stroke-width:0.6}</style>\n"
        + "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        + body
        + "</svg>\n";
  }

  private static int panel(StringBuilder b, ModeResult m, Map<String, String> colour, int top) {
    List<String> rows = new ArrayList<>();
    for (LockTimeline.Hold h : m.holds()) {
      String r = h.node() + " " + h.key();
      if (!rows.contains(r)) {
        rows.add(r);
      }
    }
    if (rows.isEmpty()) {
      rows.add("(no lock held)");
    }
    // every time in a ModeResult already counts from its time zero
    double lo = 0;
    double hi = 1;
    for (LockTimeline.Hold h : m.holds()) {
      lo = Math.min(lo, h.acquiredMs());
      hi = Math.max(hi, h.releasedMs().orElse(h.acquiredMs()));
    }
    for (MemberResult p : m.members()) {
      hi = Math.max(hi, p.boundMs().orElse(0.0));
    }
    double step = niceStep((hi - lo) / 8);
    double min = Math.floor(lo / step) * step;
    double max = Math.ceil(hi / step) * step;
    double scale = (WIDTH - LEFT - RIGHT) / (max - min);
    String name =
        m.mode().flag()
            + ": "
            + m.timeToBoundMs()
                .map(t -> "fully bound " + TextReport.ms(t) + " ms after " + m.timeZero())
                .orElse("not fully bound");
    b.append(text(20, top, "start", "panel", name));
    int chartTop = top + 10;
    int chartBottom = chartTop + rows.size() * ROW;
    for (double t = min; t <= max + step / 2; t += step) {
      double x = LEFT + (t - min) * scale;
      b.append(
          String.format(
              Locale.ROOT,
              "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
              x,
              chartTop,
              x,
              chartBottom));
      b.append(text(x, chartBottom + 14, "middle", "tick", fmt(t)));
    }
    b.append(
        String.format(
            Locale.ROOT,
            "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>",
            LEFT,
            chartBottom,
            WIDTH - RIGHT,
            chartBottom));
    b.append(text(WIDTH - RIGHT, chartBottom + 28, "end", "tick", "ms since " + m.timeZero()));
    for (int i = 0; i < rows.size(); i++) {
      b.append(text(LEFT - 8, chartTop + i * ROW + ROW / 2 + 4, "end", "label", rows.get(i)));
    }
    if (m.timeZero().equals(ModeResult.PERMIT_RELEASE)) {
      double x = LEFT + (0 - min) * scale;
      b.append(
          String.format(
              Locale.ROOT,
              "<line class=\"zero\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
              x,
              chartTop - 4,
              x,
              chartBottom));
      b.append(text(x + 3, chartTop - 1, "start", "tick", "Permit release"));
    }
    for (LockTimeline.Hold h : m.holds()) {
      int row = rows.indexOf(h.node() + " " + h.key());
      double x = LEFT + (h.acquiredMs() - min) * scale;
      double w = Math.max(2, (h.releasedMs().orElse(max) - h.acquiredMs()) * scale);
      int yb = chartTop + row * ROW + (ROW - BAR) / 2;
      b.append(
          String.format(
              Locale.ROOT,
              "<rect class=\"hold\" data-pod=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                  + "height=\"%d\" rx=\"2\" fill=\"%s\"><title>%s</title></rect>",
              esc(h.pod()),
              x,
              yb,
              w,
              BAR,
              colour.getOrDefault(h.pod(), "#999"),
              esc(
                  h.pod()
                      + " held "
                      + h.key()
                      + " on "
                      + h.node()
                      + " from "
                      + TextReport.ms(h.acquiredMs())
                      + " to "
                      + h.releasedMs().map(TextReport::ms).orElse("the end (still held)")
                      + " ms after "
                      + m.timeZero()
                      + "; acquired by "
                      + h.acquiredBy()
                      + (h.releasedBy().isEmpty() ? "" : ", released by " + h.releasedBy()))));
    }
    return chartBottom + 34;
  }

  static double niceStep(double raw) {
    double p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (double f : new double[] {1, 2, 5, 10}) {
      if (f * p >= raw) {
        return f * p;
      }
    }
    return 10 * p;
  }

  private static String fmt(double t) {
    return t == Math.rint(t) ? String.valueOf((long) t) : String.format(Locale.ROOT, "%.1f", t);
  }

  static String text(double x, double y, String anchor, String cls, String s) {
    return String.format(
        Locale.ROOT,
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">%s</text>%n",
        x,
        y,
        anchor,
        cls,
        esc(s));
  }

  static String esc(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
