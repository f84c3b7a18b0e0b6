package dev.hamilock.benchmarks.reads;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.TestPod;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.ResourceV1Api;
import io.kubernetes.client.openapi.models.V1PodList;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How long the reads of a bind's re-fit wait on the API server right after a write (issue 25 item
 * 2): a consistent LIST ({@code resourceVersion} unset) is served from kube-apiserver's watch cache
 * once that resource's cache has reached etcd's current revision; after a write to another resource
 * (the lock's node PATCH) the cache learns that revision only from a progress notification, which
 * kube-apiserver requests on a ~100 ms tick ({@code storage/cacher} {@code
 * conditionalProgressRequester}). Each case writes, then times one read, {@code samples} times.
 *
 * <p>A benchmark, not a test: the figures depend on the machine. On the emulator (which serves
 * every read as it arrives) the cases only check that the requests are well formed.
 *
 * @param name what is written, then read
 * @param p50Ms median of the read's milliseconds
 * @param p90Ms 90th percentile
 * @param maxMs slowest
 */
public record ConsistentReadLatency(String name, double p50Ms, double p90Ms, double maxMs) {

  /** One write-then-read case. */
  private interface Sample {
    double millis() throws ApiException;
  }

  /**
   * Runs every case on {@code k8s}: creates node {@code read-latency-node} and pod {@code
   * default/read-latency-pod} bound to it (or reuses them).
   *
   * @param k8s the emulator or the real kube-apiserver; serving {@code resource.k8s.io/v1}
   * @param samples reads per case; at least 3
   * @return one row per case, in a fixed order
   * @throws ApiException when a read is refused
   * @throws IllegalArgumentException when {@code samples} is below 3
   */
  public static List<ConsistentReadLatency> measure(KubeBackend k8s, int samples)
      throws ApiException, InterruptedException {
    if (samples < 3) {
      throw new IllegalArgumentException("samples must be at least 3: " + samples);
    }
    String node = "read-latency-node";
    String pod = "read-latency-pod";
    if (k8s.get("nodes", null, node).isEmpty()) {
      k8s.createNode(node, Map.of());
    }
    if (k8s.get("pods", "default", pod).isEmpty()) {
      k8s.create(TestPod.named("default", pod).container("c", "busybox").nodeName(node).toJson());
    }
    ApiClient api = k8s.newApiClient(Duration.ofSeconds(10));
    CoreV1Api core = new CoreV1Api(api);
    ResourceV1Api dra = new ResourceV1Api(api);
    String onNode = "spec.nodeName=" + node;
    int[] n = {0};
    Write nodeWrite = () -> annotate(k8s, "nodes", null, node, n[0]++);
    Write podWrite = () -> annotate(k8s, "pods", "default", pod, n[0]++);
    List<ConsistentReadLatency> rows = new ArrayList<>();
    rows.add(
        run(
            "node write, then LIST pods on the node (consistent)",
            samples,
            () -> {
              nodeWrite.run();
              return time(() -> core.listPodForAllNamespaces().fieldSelector(onNode).execute());
            }));
    rows.add(
        run(
            "node write, pod write, then LIST pods resourceVersionMatch=NotOlderThan the pod's",
            samples,
            () -> {
              nodeWrite.run();
              String rv = podWrite.run();
              return time(
                  () -> {
                    V1PodList l =
                        core.listPodForAllNamespaces()
                            .fieldSelector(onNode)
                            .resourceVersion(rv)
                            .resourceVersionMatch("NotOlderThan")
                            .execute();
                    if (l.getItems().stream()
                        .noneMatch(
                            p ->
                                rv.equals(
                                    Objects.requireNonNull(p.getMetadata())
                                        .getResourceVersion()))) {
                      throw new IllegalStateException("the list misses the pod written at " + rv);
                    }
                  });
            }));
    rows.add(
        run(
            "node write, then LIST pods on the node resourceVersion=0 (watch cache)",
            samples,
            () -> {
              nodeWrite.run();
              return time(
                  () ->
                      core.listPodForAllNamespaces()
                          .fieldSelector(onNode)
                          .resourceVersion("0")
                          .execute());
            }));
    rows.add(
        run(
            "node write, then LIST resourceclaims (consistent)",
            samples,
            () -> {
              nodeWrite.run();
              return time(() -> dra.listResourceClaimForAllNamespaces().execute());
            }));
    rows.add(
        run(
            "node write, pod write, then LIST resourceclaims (consistent)",
            samples,
            () -> {
              nodeWrite.run();
              podWrite.run();
              return time(() -> dra.listResourceClaimForAllNamespaces().execute());
            }));
    rows.add(
        run(
            "node write, then LIST resourceslices on the node (consistent)",
            samples,
            () -> {
              nodeWrite.run();
              return time(() -> dra.listResourceSlice().fieldSelector(onNode).execute());
            }));
    rows.add(
        run(
            "node write, then GET the node",
            samples,
            () -> {
              nodeWrite.run();
              return time(() -> core.readNode(node).execute());
            }));
    rows.add(
        run(
            "no write, LIST pods on the node (consistent)",
            samples,
            () -> time(() -> core.listPodForAllNamespaces().fieldSelector(onNode).execute())));
    return rows;
  }

  private interface Write {
    String run();
  }

  private interface Read {
    void run() throws ApiException;
  }

  /**
   * Sets annotation {@code hamilock.dev/read-latency} to {@code i}; returns the resourceVersion.
   */
  private static String annotate(KubeBackend k8s, String resource, String ns, String name, int i) {
    JsonNode written =
        k8s.mutate(
            resource,
            ns,
            name,
            o -> {
              o.withObject("/metadata/annotations").put("hamilock.dev/read-latency", "" + i);
              return o;
            });
    return written.path("metadata").path("resourceVersion").asText();
  }

  private static double time(Read r) throws ApiException {
    long start = System.nanoTime();
    r.run();
    return (System.nanoTime() - start) / 1e6;
  }

  private static ConsistentReadLatency run(String name, int samples, Sample s)
      throws ApiException, InterruptedException {
    double[] ms = new double[samples];
    for (int i = 0; i < samples; i++) {
      ms[i] = s.millis();
      Thread.sleep(30); // pacing: writes fall at varied points of the ~100 ms progress tick
    }
    java.util.Arrays.sort(ms);
    return new ConsistentReadLatency(
        name, ms[samples / 2], ms[(int) Math.ceil(samples * 0.9) - 1], ms[samples - 1]);
  }

  /** {@return a Markdown table of {@code rows}} */
  public static String table(List<ConsistentReadLatency> rows) {
    StringBuilder b = new StringBuilder("| write, then read | p50 ms | p90 ms | max ms |\n");
    b.append("|---|---|---|---|\n");
    for (ConsistentReadLatency r : rows) {
      b.append("| %s | %.1f | %.1f | %.1f |\n".formatted(r.name, r.p50Ms, r.p90Ms, r.maxMs));
    }
    return b.toString();
  }
}
