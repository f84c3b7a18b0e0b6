package dev.hamilock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.benchmarks.convergence.Algorithm;
import dev.hamilock.benchmarks.convergence.Algorithms;
import dev.hamilock.benchmarks.convergence.ConvergenceHarness;
import dev.hamilock.benchmarks.convergence.ConvergenceResults;
import dev.hamilock.benchmarks.convergence.HarnessSettings;
import dev.hamilock.benchmarks.convergence.Scenario;
import dev.hamilock.benchmarks.convergence.ScenarioSummary;
import dev.hamilock.benchmarks.convergence.UncontendedCost;
import dev.hamilock.benchmarks.jmh.ClusterFixtures;
import dev.hamilock.benchmarks.jmh.CodecBenchmark;
import dev.hamilock.benchmarks.jmh.FitBenchmark;
import dev.hamilock.benchmarks.jmh.JmhSuite;
import dev.hamilock.benchmarks.report.MachineInfo;
import dev.hamilock.benchmarks.report.ReportWriter;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * CI smoke mode: every benchmark method runs once and the convergence harness runs one tiny
 * scenario (N = 2, one repetition). Only structural facts are asserted, never timing.
 */
class BenchmarksSmokeTest {

  @Test
  void codecBenchmarksRoundTripRealValues() throws Exception {
    CodecBenchmark b = new CodecBenchmark();
    b.setUp();
    assertThat(b.lockRecordParse().owner()).contains(LockOwner.of("default", "gang-pod-1"));
    assertThat(b.lockRecordFormat()).isEqualTo(ClusterFixtures.LOCK_VALUE);
    List<DeviceInfo> devices = b.registrationDecodeJson8Gpus();
    assertThat(devices).hasSize(8);
    assertThat(devices).extracting(DeviceInfo::index).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    assertThat(devices).allSatisfy(d -> assertThat(d.devmem()).isEqualTo(23028));
    assertThat(b.podDevicesEncode()).isEqualTo(ClusterFixtures.POD_DEVICES_VALUE);
    List<List<ContainerDevice>> decoded = b.podDevicesDecode();
    assertThat(decoded).extracting(List::size).containsExactly(2, 1);
    assertThat(LockRecordCodec.parse(b.lockRecordFormat())).isEqualTo(b.lockRecordParse());
  }

  @Test
  void fitBenchmarkFiltersEveryNodeAndPicksOne() throws Exception {
    FitBenchmark b = new FitBenchmark();
    b.nodes = 300;
    b.gpusPerNode = 8;
    b.setUp();
    FilterResult r = b.filterAllNodesPickBest();
    assertThat(r.devicesRequested()).isTrue();
    assertThat(r.passed().size() + r.failedNodes().size()).isEqualTo(300);
    assertThat(r.failedNodes())
        .isNotEmpty(); // the fixture's busy nodes cannot take 3000 MiB / 30 cores
    String best = r.bestNode().orElseThrow();
    assertThat(r.passed()).contains(best);
    List<List<ContainerDevice>> nv =
        r.best().orElseThrow().devices().forVendor(ClusterFixtures.NVIDIA);
    assertThat(nv).hasSize(1);
    assertThat(nv.get(0))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.usedmem()).isEqualTo(3000);
              assertThat(d.usedcores()).isEqualTo(30);
            });
  }

  @Test
  void convergenceHarnessRunsATinyScenarioAndWritesParsableReports(@TempDir Path out)
      throws Exception {
    HarnessSettings settings =
        new HarnessSettings(
            Duration.ofMillis(20),
            1,
            10,
            Duration.ofSeconds(28),
            Duration.ofSeconds(30),
            0,
            List.of(new Scenario(2, 1, 0, 1)));
    List<Algorithm> algorithms = Algorithms.all();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    ConvergenceResults results;
    try (ConvergenceHarness harness =
        new ConvergenceHarness(
            settings, algorithms, new PrintStream(log, true, StandardCharsets.UTF_8))) {
      results = harness.run();
    }

    assertThat(results.summaries()).hasSize(algorithms.size());
    for (ScenarioSummary s : results.summaries()) {
      assertThat(s.failedRuns()).as(s.algorithmKey() + " failed runs; log:%n%s", log).isZero();
      assertThat(s.timesMs()).hasSize(1);
      assertThat(s.exclusionViolations()).isZero();
      assertThat(s.bindingsPerMember()).isEqualTo(1.0);
      assertThat(s.lockRequestsPerMember()).isPositive();
    }
    UncontendedCost hami =
        results.costs().stream()
            .filter(c -> c.algorithmKey().equals("hami-polling"))
            .findFirst()
            .orElseThrow();
    // HAMi's LockNode is GET + SetNodeLock's GET + the retry loop's GET + PATCH; release GET + GET
    // + PATCH
    assertThat(hami.acquire()).isEqualTo(4);
    assertThat(hami.releaseSameProcess()).isEqualTo(3);
    assertThat(hami.releaseByPlugin()).isEqualTo(3);
    UncontendedCost ours =
        results.costs().stream()
            .filter(c -> c.algorithmKey().equals("ours-watch"))
            .findFirst()
            .orElseThrow();
    // design decision 2: one JSON Patch to acquire, one to release (the value this process wrote)
    assertThat(ours.acquire()).isEqualTo(1);
    assertThat(ours.releaseSameProcess()).isEqualTo(1);
    // the plugin releases with the value its pod lookup read: one compare-and-delete, no GET
    assertThat(ours.releaseByPlugin()).isEqualTo(1);
    assertThat(ours.pluginDetail()).isEqualTo("patch nodes=1");
    for (ScenarioSummary s : results.summaries()) {
      // hami-lock's plugin lookup is one node GET per member, counted apart; HAMi's is not
      // simulated
      assertThat(s.pluginLookupsPerMember()).as(s.algorithmKey()).isEqualTo(s.ours() ? 1.0 : 0.0);
      assertThat(s.requestsByVerb()).as(s.algorithmKey()).containsKey("create pods/binding");
    }

    ReportWriter.write(
        out,
        MachineInfo.current(),
        results,
        List.of(
            new JmhSuite.Figure(
                "FitBenchmark.filterAllNodesPickBest", 1.5, 0.1, "ms/op", 1024, 700)),
        "smoke",
        true);
    List<String> csv = Files.readAllLines(out.resolve(ReportWriter.CSV));
    assertThat(csv.get(0)).isEqualTo(ReportWriter.CSV_HEADER);
    int columns = ReportWriter.CSV_HEADER.split(",").length;
    assertThat(csv.subList(1, csv.size()))
        .hasSize(algorithms.size())
        .allSatisfy(row -> assertThat(row.split(",", -1)).hasSize(columns));
    Document svg =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(out.resolve(ReportWriter.SVG).toFile());
    assertThat(svg.getDocumentElement().getTagName()).isEqualTo("svg");
    assertThat(svg.getElementsByTagName("polyline").getLength())
        .isGreaterThanOrEqualTo(algorithms.size() + 1);
    String md = Files.readString(out.resolve(ReportWriter.MARKDOWN));
    assertThat(md).contains("## Goals (issue 8)", "| 2 | 1 | hami-polling |", "≤ 10 ms/op");
    assertThat(Files.readAllLines(out.resolve(ReportWriter.JMH_CSV))).hasSize(2);
  }
}
