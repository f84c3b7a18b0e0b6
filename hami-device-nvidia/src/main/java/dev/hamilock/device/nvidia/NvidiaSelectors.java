package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.NvidiaAnnotations.VGPU_MODE;
import static dev.hamilock.device.spi.PolicyValues.VGPU_MODE_WORDS;

import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.fit.PodFitter;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pod's NVIDIA device selectors, parsed once per pod (spec §5.2, V49-V51).
 *
 * @param useTypes lower-cased type substrings, any must match (empty = no constraint)
 * @param nouseTypes lower-cased type substrings, none may match
 * @param useUuids exact UUIDs, one must match (empty = no constraint)
 * @param nouseUuids exact UUIDs that must not match
 * @param numaBind whether {@code nvidia.com/numa-bind} is a Go true
 * @param vgpuMode {@code nvidia.com/vgpu-mode} value; the device mode must be a substring
 */
record NvidiaSelectors(
    List<String> useTypes,
    List<String> nouseTypes,
    Set<String> useUuids,
    Set<String> nouseUuids,
    boolean numaBind,
    Optional<String> vgpuMode) {

  private static final Logger LOG = LoggerFactory.getLogger(NvidiaSelectors.class);

  /**
   * Parses the selectors; an unknown {@code numa-bind} word is false (the fitter warns), an unknown
   * {@code vgpu-mode} word still constrains (fits no device), with a WARN naming the pod.
   */
  static NvidiaSelectors fromAnnotations(String podKey, Map<String, String> a) {
    String mode = a.get(VGPU_MODE);
    if (mode != null && !PolicyValues.isVgpuModeList(mode)) {
      String accepted = "a comma list of " + String.join(", ", VGPU_MODE_WORDS);
      String effect =
          "kept as a selector: no device mode matches an unknown word (CardTypeMismatch)";
      LOG.warn("{}", new AnnotationWarning(podKey, VGPU_MODE, mode, accepted, effect).message());
    }
    return new NvidiaSelectors(
        list(a.get(NvidiaAnnotations.USE_GPUTYPE), true),
        list(a.get(NvidiaAnnotations.NOUSE_GPUTYPE), true),
        Set.copyOf(list(a.get(NvidiaAnnotations.USE_GPUUUID), false)),
        Set.copyOf(list(a.get(NvidiaAnnotations.NOUSE_GPUUUID), false)),
        PolicyValues.goBool(a.get(PodFitter.NUMA_BIND_ANNOTATION)).orElse(false),
        Optional.ofNullable(mode));
  }

  /** A comma list's non-empty members, trimmed (and lower-cased if {@code lower}); null: none. */
  static List<String> list(String v, boolean lower) {
    return v == null
        ? List.of()
        : Arrays.stream(v.split(",", -1))
            .map(String::trim)
            .filter(t -> !t.isEmpty())
            .map(t -> lower ? t.toLowerCase(Locale.ROOT) : t)
            .toList();
  }

  /** Type check: use/nouse-gputype (case-insensitive substring) and vgpu-mode (substring). */
  boolean typeMatches(String type, String mode) {
    String t = useTypes.isEmpty() && nouseTypes.isEmpty() ? "" : type.toLowerCase(Locale.ROOT);
    return (useTypes.isEmpty() || useTypes.stream().anyMatch(t::contains))
        && nouseTypes.stream().noneMatch(t::contains)
        && (vgpuMode.isEmpty() || vgpuMode.get().contains(mode));
  }

  /** UUID check: nouse wins over use. */
  boolean uuidMatches(String id) {
    return !nouseUuids.contains(id) && (useUuids.isEmpty() || useUuids.contains(id));
  }
}
