package dev.hamilock.preflight.checks;

import static dev.hamilock.preflight.checks.GpuResources.CORES;
import static dev.hamilock.preflight.checks.GpuResources.COUNT;
import static dev.hamilock.preflight.checks.GpuResources.MEMORY;
import static dev.hamilock.preflight.checks.GpuResources.MEMORY_PERCENTAGE;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.YamlPath;
import dev.hamilock.preflight.model.ContainerSpec;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodTemplate;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * PF10 {@code gpu-resource-values}: NVIDIA resource values that HAMi rejects or silently drops or
 * changes (HAMi {@code pkg/device/nvidia/device.go} GenerateResourceRequests and the admission
 * webhook; spec §5.3–5.4, §7 items 21–23). Every value in {@code limits} and {@code requests} is
 * examined, with HAMi's default resource names and memoryFactor 1.
 *
 * <ul>
 *   <li>ERROR: a value that is not a Kubernetes quantity; {@code nvidia.com/gpu} not an exact
 *       integer (no request); {@code nvidia.com/gpumem} not an exact integer or outside
 *       0…2147483647 MiB (e.g. {@code 16Gi} = 17179869184: the <em>whole</em> GPU request is
 *       dropped and the pod is scheduled as if it had none); {@code nvidia.com/gpumem-percentage}
 *       outside 0…100 (the webhook rejects the pod);
 *   <li>WARNING: {@code gpumem-percentage} not an exact integer (ignored: whole card); {@code
 *       nvidia.com/gpucores} above 100 (clamped to 100, i.e. an exclusive card), negative or not an
 *       exact integer (ignored); memory, percentage or cores without a GPU count.
 * </ul>
 */
public final class GpuResourceValuesCheck extends AbstractCheck {

  private static final BigDecimal HUNDRED = BigDecimal.valueOf(100);

  /** Creates the check. */
  public GpuResourceValuesCheck() {
    super(
        "PF10",
        "gpu-resource-values",
        "nvidia.com/gpumem/gpumem-percentage/gpucores values HAMi would reject or silently drop.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    for (PodTemplate t : model.podTemplates()) {
      for (ContainerSpec c : t.containers()) {
        checkValues(t, c, "limits", c.limits(), out);
        checkValues(t, c, "requests", c.requests(), out);
        boolean count = c.limits().containsKey(COUNT) || c.requests().containsKey(COUNT);
        Optional<String> other =
            List.of(MEMORY, MEMORY_PERCENTAGE, CORES).stream()
                .filter(r -> c.limits().containsKey(r) || c.requests().containsKey(r))
                .findFirst();
        if (!count && other.isPresent()) {
          String section = c.limits().containsKey(other.get()) ? "limits" : "requests";
          out.add(
              finding(
                  Severity.WARNING,
                  at(t, c, section, other.get()),
                  "Container \""
                      + c.name()
                      + "\" of "
                      + t.describe()
                      + " sets "
                      + other.get()
                      + " without "
                      + COUNT
                      + ": HAMi's scheduler sees no GPU request unless its admission webhook adds a "
                      + "default count, which it does only when defaultGPUNum > 0 and the value is in limits.",
                  "Add "
                      + COUNT
                      + ": \"1\" (or the number of GPUs wanted) to resources.limits; do not rely on "
                      + "the webhook's defaultGPUNum."));
        }
      }
    }
    return out;
  }

  private void checkValues(
      PodTemplate t,
      ContainerSpec c,
      String section,
      Map<String, String> values,
      List<Finding> out) {
    for (String resource : GpuResources.ALL) {
      String text = values.get(resource);
      if (text == null) {
        continue;
      }
      Location where = at(t, c, section, resource);
      String subject =
          resource + ": \"" + text + "\" in container \"" + c.name() + "\" of " + t.describe();
      Optional<BigDecimal> parsed = GpuResources.parse(text);
      if (parsed.isEmpty()) {
        out.add(
            finding(
                Severity.ERROR,
                where,
                subject + " is not a Kubernetes quantity; the API server rejects the pod.",
                "Write a plain integer, e.g. " + resource + ": \"" + example(resource) + "\"."));
        continue;
      }
      BigDecimal v = parsed.get();
      boolean integer = GpuResources.isInteger(v);
      switch (resource) {
        case COUNT -> {
          if (!integer) {
            out.add(
                finding(
                    Severity.ERROR,
                    where,
                    subject + " is not a whole number of GPUs; HAMi sees no GPU request.",
                    "Request whole GPUs, e.g. nvidia.com/gpu: \"1\", and share them with nvidia.com/gpumem / gpucores."));
          }
        }
        case MEMORY -> {
          if (!integer || v.signum() < 0 || v.compareTo(GpuResources.INT32_MAX) > 0) {
            out.add(
                finding(
                    Severity.ERROR,
                    where,
                    subject
                        + " is "
                        + (!integer
                            ? "not an exact integer"
                            : "outside 0..2147483647 (value " + v.toBigInteger() + ")")
                        + ": nvidia.com/gpumem is in MiB and HAMi drops the whole GPU request, so the pod is "
                        + "scheduled as if it had no GPU request and Allocate fails later.",
                    "Write the memory as a plain number of MiB without a suffix, e.g. nvidia.com/gpumem: \""
                        + suggestMiB(v)
                        + "\"."));
          }
        }
        case MEMORY_PERCENTAGE -> {
          if (v.signum() < 0 || v.compareTo(HUNDRED) > 0) {
            out.add(
                finding(
                    Severity.ERROR,
                    where,
                    subject + " is outside 0..100: HAMi's admission webhook " + "rejects the pod.",
                    "Use a percentage of one card between 1 and 100."));
          } else if (!integer) {
            out.add(
                finding(
                    Severity.WARNING,
                    where,
                    subject
                        + " is not an exact integer: HAMi ignores it and "
                        + "gives the container the whole card's memory.",
                    "Use a whole percentage between 1 and 100."));
          }
        }
        case CORES -> {
          if (!integer || v.signum() < 0) {
            out.add(
                finding(
                    Severity.WARNING,
                    where,
                    subject
                        + " is not a non-negative integer: HAMi ignores it "
                        + "and uses defaultCores.",
                    "Use a whole percentage of one card's cores between 0 and 100."));
          } else if (v.compareTo(HUNDRED) > 0) {
            out.add(
                finding(
                    Severity.WARNING,
                    where,
                    subject
                        + " is above 100: HAMi clamps it to 100, which "
                        + "makes the card exclusive to this container.",
                    "nvidia.com/gpucores is a percentage of one card: use 1..100 (100 = whole card)."));
          }
        }
        default -> throw new IllegalStateException("unreachable: " + resource);
      }
    }
  }

  private static Location at(PodTemplate t, ContainerSpec c, String section, String resource) {
    return t.document()
        .location(YamlPath.key(YamlPath.join(c.path(), "resources." + section), resource));
  }

  private static String example(String resource) {
    return switch (resource) {
      case MEMORY -> "3000";
      case MEMORY_PERCENTAGE, CORES -> "30";
      default -> "1";
    };
  }

  /** A MiB suggestion for a byte-like value (e.g. 16Gi = 17179869184 → 16384). */
  private static String suggestMiB(BigDecimal v) {
    if (v.compareTo(GpuResources.INT32_MAX) > 0) {
      return v.divideToIntegralValue(BigDecimal.valueOf(1024L * 1024L)).toBigInteger().toString();
    }
    return v.signum() < 0
        ? "3000"
        : v.setScale(0, java.math.RoundingMode.DOWN).toBigInteger().toString();
  }
}
