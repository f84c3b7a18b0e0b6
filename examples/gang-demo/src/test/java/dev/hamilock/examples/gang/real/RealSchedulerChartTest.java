package dev.hamilock.examples.gang.real;

import static dev.hamilock.examples.gang.real.RealClusterDemoOptionsTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.examples.gang.report.RealSchedulerChart;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** {@link RealSchedulerChart}: the real-scheduler chart's bars, from runs made up here. */
class RealSchedulerChartTest {
  static final List<ScenarioRun> RUNS =
      List.of(
          run("guide", ExtenderMode.GANG_RETRY, 1500, true),
          run("guide", ExtenderMode.FAIL_FAST, 6000, true),
          run("guide", ExtenderMode.FLOOR, 900, true),
          run("guide", ExtenderMode.GANG_RETRY, 1300, true),
          run("guide", ExtenderMode.FAIL_FAST, 30000, true),
          run("guide", ExtenderMode.FLOOR, 1100, true),
          run("guide", ExtenderMode.GANG_RETRY, 2000, true),
          run("guide", ExtenderMode.FAIL_FAST, 4000, true),
          run("guide", ExtenderMode.FLOOR, 700, true),
          run("mixed", ExtenderMode.GANG_RETRY, 2500, true),
          run("mixed", ExtenderMode.FAIL_FAST, 2600, false));

  static Map<String, Element> bars(String svg) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    Document doc =
        f.newDocumentBuilder()
            .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("svg");
    NodeList rects = doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "rect");
    Map<String, Element> out = new LinkedHashMap<>();
    for (int i = 0; i < rects.getLength(); i++) {
      Element e = (Element) rects.item(i);
      if (e.getAttribute("class").equals("bar")) {
        out.put(e.getAttribute("data-scenario") + " " + e.getAttribute("data-mode"), e);
      }
    }
    return out;
  }

  @Test
  void oneBarPerScenarioAndModeAtTheMedianOnOneLogScaleAndNoBarForAFailedMode() throws Exception {
    String svg = RealSchedulerChart.render(RUNS, "test & chart");
    Map<String, Element> bars = bars(svg);
    assertThat(bars.keySet())
        .containsExactly("guide gang retry", "guide fail-fast", "guide floor", "mixed gang retry");
    assertThat(bars.get("guide gang retry").getAttribute("data-ms")).isEqualTo("1500");
    assertThat(bars.get("guide fail-fast").getAttribute("data-ms")).isEqualTo("6000");
    // floor = median floor run 900 + (3 pods on node-a - 1) x 20 ms
    assertThat(bars.get("guide floor").getAttribute("data-ms")).isEqualTo("940");
    double h1500 = height(bars.get("guide gang retry"));
    double h6000 = height(bars.get("guide fail-fast"));
    double h940 = height(bars.get("guide floor"));
    double h2500 = height(bars.get("mixed gang retry"));
    // log scale from 100 ms: heights grow with log10(ms / 100)
    assertThat((h6000 - h1500) / (h2500 - h1500))
        .isCloseTo(
            Math.log10(6000.0 / 1500) / Math.log10(2500.0 / 1500),
            org.assertj.core.data.Offset.offset(0.02));
    assertThat(h940).isLessThan(h1500);
    assertThat(svg)
        .contains("1.60× floor", "6.38× floor", "a run failed", "not run", "test &amp; chart")
        .contains(">1.50 s<", ">6.00 s<", ">0.94 s<")
        .contains("load average 3.5–3.5");
  }

  private static double height(Element e) {
    return Double.parseDouble(e.getAttribute("height"));
  }
}
