package dev.hamilock.benchmarks.jmh;

import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The scheduler extender's Filter for one pod over a whole cluster (HAMi {@code
 * pkg/scheduler/scheduler.go} Filter and {@code score.go} calcScore, through {@link
 * PodFitter#filter}): parse the pod's request (1 GPU, 3000 MiB, 30 cores), fit it on every node
 * (device ordering, NVIDIA fit, node score) and pick the best node. Node usage is precomputed, as a
 * scheduler keeps it in its informer cache. Goal: ≤ 10 ms per pod over 5,000 nodes × 8 GPUs on a
 * 2-core machine.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class FitBenchmark {

  /** Nodes in the cluster. */
  @Param("5000")
  public int nodes;

  /** GPUs per node. */
  @Param("8")
  public int gpusPerNode;

  private PodFitter fitter;
  private PodView pod;
  private List<NodeUsage> cluster;

  /** Builds the cluster (seed 42) and the pod. */
  @Setup
  public void setUp() {
    fitter = PodFitter.create(ClusterFixtures.nvidiaRegistry());
    pod = ClusterFixtures.gpuPod("bench-pod");
    cluster = ClusterFixtures.cluster(nodes, gpusPerNode, 42);
  }

  /**
   * @return the filter result (chosen node, passing and failing nodes)
   * @throws InvalidPodRequestException never for the fixed pod
   */
  @Benchmark
  public FilterResult filterAllNodesPickBest() throws InvalidPodRequestException {
    return fitter.filter(pod, cluster);
  }
}
