package dev.hamilock.device.spi;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A parsed device scheduling policy ({@code hami.io/gpu-scheduler-policy} or the default; HAMi
 * {@code pkg/scheduler/policy/gpu_policy.go}, spec §5.8): a single value selects a fixed ordering
 * (unknown = spread); a comma list (or bare {@code numa}) gives sort keys in written order, {@code
 * mutex} and {@code topology-aware} in it being filters only.
 *
 * @param list whether the comma-list form applies
 * @param keys the list form's sort keys in order (empty for single values)
 */
public record GpuPolicy(
    String raw, boolean list, List<SortKey> keys, boolean mutex, boolean topologyAware) {

  /** Scheduler default device policy (HAMi flag {@code --gpu-scheduler-policy}). */
  public static final String DEFAULT = "spread";

  public enum SortKey {
    /** device score ascending (fullest tried first) */
    BINPACK,
    /** device score descending (emptiest tried first) */
    SPREAD,
    /** NUMA id ascending */
    NUMA
  }

  public GpuPolicy {
    Objects.requireNonNull(raw, "raw");
    keys = List.copyOf(keys);
  }

  /** Parses a policy text; never fails: unknown words mean spread order. */
  public static GpuPolicy parse(String raw) {
    String t = raw.trim();
    boolean listForm = t.indexOf(',') >= 0 || t.equals("numa");
    boolean mutex = false;
    boolean topo = false;
    Set<SortKey> keys = new LinkedHashSet<>(3);
    for (String part : t.split(",", -1)) {
      String p = part.trim();
      switch (p) {
        case "mutex" -> mutex = true;
        case "topology-aware" -> topo = true;
        case "binpack" -> keys.add(SortKey.BINPACK);
        case "spread" -> keys.add(SortKey.SPREAD);
        case "numa" -> keys.add(SortKey.NUMA);
        default -> {}
      }
    }
    return new GpuPolicy(raw, listForm, listForm ? List.copyOf(keys) : List.of(), mutex, topo);
  }

  /** Whether the single-value form is {@code binpack}. */
  public boolean isBinpack() {
    return !list && raw.trim().equals("binpack");
  }

  /** Whether the single-value form is {@code mutex}. */
  public boolean isMutexOrder() {
    return !list && raw.trim().equals("mutex");
  }
}
