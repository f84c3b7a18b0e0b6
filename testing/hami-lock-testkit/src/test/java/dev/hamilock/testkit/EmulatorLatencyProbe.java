package dev.hamilock.testkit;

import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.util.PatchUtils;
import java.util.Arrays;
import java.util.Map;

/**
 * Not a test: measures loopback round trips through client-java on a warm JVM (3000 warm-up
 * iterations, then 2000 samples each) for GET and conditional merge-PATCH (current resourceVersion,
 * 200). Run with the test class path: {@code java -cp target/test-classes:target/classes:<deps>
 * dev.hamilock.testkit.EmulatorLatencyProbe}. Prints median / p90 / p99 / max in milliseconds.
 */
public final class EmulatorLatencyProbe {
  private EmulatorLatencyProbe() {}

  public static void main(String[] args) throws Exception {
    int warmup = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
    int samples = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    try (ApiServerEmulator emu = ApiServerEmulator.builder().writeHistoryLimit(0).start()) {
      emu.createNode("node-a", Map.of("counter", "0"));
      ApiClient client = emu.apiClient();
      CoreV1Api api = new CoreV1Api(client);
      long[] get = new long[samples];
      long[] patch = new long[samples];
      for (int i = 0; i < warmup + samples; i++) {
        long t0 = System.nanoTime();
        V1Node n = api.readNode("node-a").execute();
        long t1 = System.nanoTime();
        String body =
            "{\"metadata\":{\"resourceVersion\":\""
                + n.getMetadata().getResourceVersion()
                + "\",\"annotations\":{\"counter\":\""
                + i
                + "\"}}}";
        long t2 = System.nanoTime();
        PatchUtils.patch(
            V1Node.class,
            () -> api.patchNode("node-a", new V1Patch(body)).buildCall(null),
            V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
            client);
        long t3 = System.nanoTime();
        if (i >= warmup) {
          get[i - warmup] = t1 - t0;
          patch[i - warmup] = t3 - t2;
        }
      }
      System.out.println(report("GET node", get));
      System.out.println(report("conditional merge-PATCH node", patch));
    }
  }

  private static String report(String what, long[] nanos) {
    long[] s = nanos.clone();
    Arrays.sort(s);
    return String.format(
        "%-30s n=%d median=%.3f ms p90=%.3f ms p99=%.3f ms max=%.3f ms",
        what,
        s.length,
        s[s.length / 2] / 1e6,
        s[(int) (s.length * 0.9)] / 1e6,
        s[(int) (s.length * 0.99)] / 1e6,
        s[s.length - 1] / 1e6);
  }
}
