package dev.hamilock.device.spi;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The one validation of every enumerated string this library reads from pod annotations, node
 * registrations, flags and configuration (HAMi#2767 / PR#2769, HAMi#2995; HAMi {@code pkg/util}
 * {@code IsValidGPUSchedulerPolicy} / {@code IsValidNodeSchedulerPolicy}). Values are trimmed and
 * then compared exactly (case-sensitive, as HAMi): {@code binpak} and {@code Binpack} are not
 * {@code binpack}.
 *
 * <table>
 *   <caption>Enumerated values</caption>
 *   <tr><th>where</th><th>accepted</th><th>unknown value</th></tr>
 *   <tr><td>{@code hami.io/gpu-scheduler-policy}, {@code --gpu-scheduler-policy}</td>
 *       <td>a comma list of {@link #GPU_POLICY_WORDS} (members trimmed)</td>
 *       <td>annotation: ignored with a warning, the configured default stands; flag or factory:
 *       refused ({@link InvalidPolicyValueException})</td></tr>
 *   <tr><td>{@code hami.io/node-scheduler-policy}, {@code --node-scheduler-policy}</td>
 *       <td>one of {@link #NODE_POLICY_WORDS}</td><td>as above</td></tr>
 *   <tr><td>{@code nvidia.com/numa-bind}</td><td>Go {@code strconv.ParseBool} words
 *       {@link #GO_BOOL_WORDS}</td><td>ignored with a warning: false (HAMi's default)</td></tr>
 *   <tr><td>{@code nvidia.com/vgpu-mode}</td><td>a comma list of {@link #VGPU_MODE_WORDS}</td>
 *       <td>warning; the value still constrains (a selector is never dropped: no device has an
 *       unknown mode, so the pod fits nowhere with {@code CardTypeMismatch})</td></tr>
 *   <tr><td>registration {@code mode}</td><td>{@link #VGPU_MODE_WORDS} or empty</td>
 *       <td>the registration is rejected (typed decode error, fail closed)</td></tr>
 *   <tr><td>{@code hami.io/bind-phase}</td><td>{@link #BIND_PHASE_WORDS}</td>
 *       <td>warning; the pod is treated as not in any phase (never served as allocating)</td></tr>
 * </table>
 *
 * Free-text values are not enumerated and not validated here: {@code nvidia.com/use-gputype} /
 * {@code nouse-gputype} (case-insensitive substrings of model names), UUID lists, and device {@code
 * type} texts (matched by {@link DeviceVendor#ownsDeviceType}).
 */
public final class PolicyValues {
  private PolicyValues() {}

  /** Words of the device policy (HAMi {@code GPUSchedulerPolicy*}). */
  public static final List<String> GPU_POLICY_WORDS =
      List.of("binpack", "spread", "numa", "mutex", "topology-aware");

  /** Words of the node policy (HAMi {@code NodeSchedulerPolicy*}). */
  public static final List<String> NODE_POLICY_WORDS = List.of("binpack", "spread");

  /** Go's {@code strconv.ParseBool} words, true ones first. */
  public static final List<String> GO_BOOL_WORDS =
      List.of("1", "t", "T", "true", "TRUE", "True", "0", "f", "F", "false", "FALSE", "False");

  /** Device modes ({@code nvidia.com/vgpu-mode}, registration {@code mode}). */
  public static final List<String> VGPU_MODE_WORDS = List.of("hami-core", "mig", "mps");

  /** HAMi's bind phases ({@code pkg/util/types.go}). */
  public static final List<String> BIND_PHASE_WORDS = List.of("allocating", "success", "failed");

  /** A device policy text (may be null), trimmed, if a comma list of {@link #GPU_POLICY_WORDS}. */
  public static Optional<String> gpuPolicy(String raw) {
    return commaListOf(raw, GPU_POLICY_WORDS) ? Optional.of(raw.trim()) : Optional.empty();
  }

  /** Whether {@code raw} is a non-blank comma list whose trimmed members are all {@code words}. */
  private static boolean commaListOf(String raw, List<String> words) {
    return raw != null
        && !raw.isBlank()
        && Arrays.stream(raw.split(",", -1)).allMatch(p -> words.contains(p.trim()));
  }

  /** A node policy text (may be null), trimmed, if it is one of {@link #NODE_POLICY_WORDS}. */
  public static Optional<String> nodePolicy(String raw) {
    return Optional.ofNullable(raw).map(String::trim).filter(NODE_POLICY_WORDS::contains);
  }

  /** Go {@code strconv.ParseBool} (no trimming); empty if not one of {@link #GO_BOOL_WORDS}. */
  public static Optional<Boolean> goBool(String raw) {
    if (raw == null) {
      return Optional.empty();
    }
    int i = GO_BOOL_WORDS.indexOf(raw);
    return i < 0 ? Optional.empty() : Optional.of(i < 6);
  }

  /** Whether every comma member (trimmed) of a {@code vgpu-mode} value is a mode word. */
  public static boolean isVgpuModeList(String raw) {
    return commaListOf(raw, VGPU_MODE_WORDS);
  }

  /**
   * Validates a device policy setting (e.g. {@code --gpu-scheduler-policy}); returns it trimmed.
   *
   * @throws InvalidPolicyValueException naming setting, value and the accepted words
   */
  public static String requireGpuPolicy(String setting, String value) {
    return gpuPolicy(value)
        .orElseThrow(
            () ->
                new InvalidPolicyValueException(
                    setting, value, "a comma list of " + String.join(", ", GPU_POLICY_WORDS)));
  }

  /** As {@link #requireGpuPolicy} (same exception), for the node policy. */
  public static String requireNodePolicy(String setting, String value) {
    return nodePolicy(value)
        .orElseThrow(
            () ->
                new InvalidPolicyValueException(
                    setting, value, "one of " + String.join(", ", NODE_POLICY_WORDS)));
  }

  public static final class InvalidPolicyValueException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The refused value (may be null) of a setting; {@code accepted}: e.g. {@code one of …}. */
    public InvalidPolicyValueException(String setting, String value, String accepted) {
      super(
          "invalid value %s for %s: accepted %s (trimmed, case-sensitive)"
              .formatted(value == null ? "null" : "\"" + value + "\"", setting, accepted));
    }
  }
}
