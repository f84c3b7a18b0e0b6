package dev.hamilock.device.spi.fit;

import dev.hamilock.device.spi.GpuPolicy;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceUsage;
import java.util.Collection;

/**
 * Device score and policy ordering (HAMi {@code pkg/scheduler/policy/gpu_policy.go}, spec §5.8).
 *
 * <p>The sort produces the list handed to a vendor's fit, which walks it from the <em>last</em>
 * element, so "last" is tried first:
 *
 * <table>
 *   <caption>orders</caption>
 *   <tr><th>policy</th><th>sort keys</th></tr>
 *   <tr><td>{@code binpack}</td><td>score asc, numa asc</td></tr>
 *   <tr><td>{@code spread}, other single values</td><td>score desc, numa asc</td></tr>
 *   <tr><td>{@code mutex}</td><td>used desc, numa asc</td></tr>
 *   <tr><td>numa-bind + {@code binpack}</td><td>numa desc, score asc</td></tr>
 *   <tr><td>numa-bind + other single</td><td>numa asc, score desc</td></tr>
 *   <tr><td>comma list / bare {@code numa}</td><td>the written keys (numa-bind puts numa
 *       first; no key = spread)</td></tr>
 * </table>
 *
 * <p>Ties (arbitrary in HAMi) go by index, then UUID: the highest index is tried first.
 */
public final class DeviceOrdering {
  private DeviceOrdering() {}

  /**
   * HAMi device score ({@code float32} arithmetic): {@code 10 × (wSlot·(r+used)/count +
   * wCore·(c+usedcores)/totalcore + wMem·(m+usedmem)/totalmem)} where r, c, m sum over the
   * container's requests (every vendor) whose type equals the device's type text (m uses totalmem ×
   * pct / 100 when pct is neither 0 nor 101, else memreq); 0 when a denominator is 0.
   */
  public static float score(
      DeviceUsage d, Collection<ContainerDeviceRequest> containerRequests, ScoringWeights w) {
    if (d.count() == 0 || d.totalcore() == 0 || d.totalmem() == 0) {
      return 0f;
    }
    long r = 0, c = 0, m = 0;
    for (ContainerDeviceRequest q : containerRequests) {
      if (!q.type().equals(d.type())) {
        continue;
      }
      r++;
      c += q.coresreq();
      int pct = q.mempercentagereq();
      m +=
          pct != 0 && pct != ContainerDeviceRequest.PERCENTAGE_UNSET
              ? (long) d.totalmem() * pct / 100
              : q.memreq();
    }
    float slot = w.slot() * (float) (r + d.used()) / d.count();
    float core = w.core() * (float) (c + d.usedcores()) / d.totalcore();
    float mem = w.memory() * (float) (m + d.usedmem()) / d.totalmem();
    return 10f * (slot + core + mem);
  }

  /**
   * Sorts {@code order} in place (positions into {@code devices} and {@code scores}) by the policy
   * and {@code nvidia.com/numa-bind}; insertion sort, no allocation (device lists are short).
   */
  public static void sort(
      int[] order, DeviceUsage[] devices, float[] scores, GpuPolicy policy, boolean numaBind) {
    for (int i = 1; i < order.length; i++) {
      int x = order[i];
      int j = i - 1;
      while (j >= 0 && compare(order[j], x, devices, scores, policy, numaBind) > 0) {
        order[j + 1] = order[j];
        j--;
      }
      order[j + 1] = x;
    }
  }

  static int compare(int a, int b, DeviceUsage[] d, float[] s, GpuPolicy p, boolean numaBind) {
    int c;
    if (p.list()) {
      c = numaBind ? Integer.compare(d[a].numa(), d[b].numa()) : 0;
      if (c == 0) {
        boolean any = false;
        for (GpuPolicy.SortKey k : p.keys()) {
          switch (k) {
            case BINPACK -> {
              c = Float.compare(s[a], s[b]);
              any = true;
            }
            case SPREAD -> {
              c = Float.compare(s[b], s[a]);
              any = true;
            }
            default -> c = Integer.compare(d[a].numa(), d[b].numa());
          }
          if (c != 0) {
            break;
          }
        }
        if (c == 0 && !any) {
          c = Float.compare(s[b], s[a]);
        }
      }
    } else if (numaBind) { // binpack: numa desc, score asc; else numa asc, score desc
      int sign = p.isBinpack() ? -1 : 1;
      c = sign * Integer.compare(d[a].numa(), d[b].numa());
      if (c == 0) {
        c = -sign * Float.compare(s[a], s[b]);
      }
    } else {
      c =
          p.isBinpack()
              ? Float.compare(s[a], s[b])
              : p.isMutexOrder()
                  ? Integer.compare(d[b].used(), d[a].used())
                  : Float.compare(s[b], s[a]);
      if (c == 0) {
        c = Integer.compare(d[a].numa(), d[b].numa());
      }
    }
    if (c == 0) {
      c = Integer.compare(d[a].index(), d[b].index());
    }
    return c != 0 ? c : d[a].id().compareTo(d[b].id());
  }
}
