package dev.hamilock.device.nvidia;

import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Topology-aware selection among more fitting candidates than requested (HAMi {@code
 * pkg/device/nvidia/device.go}, spec §5.7, V66). Missing pair scores count as 0.
 */
final class Topology {
  private Topology() {}

  static List<ContainerDevice> select(
      List<ContainerDevice> cands, int n, Map<String, Map<String, Integer>> scores) {
    if (n == 1) {
      int best = 0;
      long bestSum = Long.MAX_VALUE;
      for (int i = 0; i < cands.size(); i++) {
        long sum = 0;
        for (int j = 0; j < cands.size(); j++) {
          if (i != j) {
            sum += score(scores, cands.get(i).uuid(), cands.get(j).uuid());
          }
        }
        if (sum < bestSum) {
          bestSum = sum;
          best = i;
        }
      }
      return List.of(cands.get(best));
    }
    int[] idx = IntStream.range(0, n).toArray();
    int[] best = idx.clone();
    long bestSum = Long.MIN_VALUE;
    while (true) {
      long sum = 0;
      for (int a = 0; a < n; a++) {
        for (int b = a + 1; b < n; b++) {
          sum += score(scores, cands.get(idx[a]).uuid(), cands.get(idx[b]).uuid());
        }
      }
      if (sum > bestSum) {
        bestSum = sum;
        best = idx.clone();
      }
      int i = n - 1;
      while (i >= 0 && idx[i] == cands.size() - n + i) {
        i--;
      }
      if (i < 0) {
        break;
      }
      idx[i]++;
      for (int j = i + 1; j < n; j++) {
        idx[j] = idx[j - 1] + 1;
      }
    }
    return Arrays.stream(best).mapToObj(cands::get).toList();
  }

  private static long score(Map<String, Map<String, Integer>> s, String a, String b) {
    return s.getOrDefault(a, Map.of()).getOrDefault(b, 0);
  }
}
