package dev.hamilock.preflight.checks;

import dev.hamilock.device.spi.view.InvalidQuantityException;
import dev.hamilock.device.spi.view.Quantities;
import dev.hamilock.preflight.model.ContainerSpec;
import dev.hamilock.preflight.model.SchedulerConfiguration;
import dev.hamilock.preflight.model.SchedulerExtender;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

/**
 * HAMi's default NVIDIA resource names (chart {@code values.yaml}; spec §5.1) and quantity helpers.
 */
final class GpuResources {

  static final String COUNT = "nvidia.com/gpu";
  static final String MEMORY = "nvidia.com/gpumem";
  static final String MEMORY_PERCENTAGE = "nvidia.com/gpumem-percentage";
  static final String CORES = "nvidia.com/gpucores";
  static final List<String> ALL = List.of(COUNT, MEMORY, MEMORY_PERCENTAGE, CORES);
  static final BigDecimal INT32_MAX = BigDecimal.valueOf(Integer.MAX_VALUE);

  private GpuResources() {}

  /**
   * The extenders of a configuration that serve HAMi: those managing one of HAMi's resource names,
   * and binding extenders without {@code managedResources} (kube-scheduler sends them every pod).
   */
  static List<SchedulerExtender> hamiExtenders(SchedulerConfiguration cfg) {
    return cfg.extenders().stream()
        .filter(
            x ->
                x.managedResources().stream().anyMatch(ALL::contains)
                    || (x.managedResources().isEmpty() && x.bindVerb().isPresent()))
        .toList();
  }

  static boolean requestsHami(ContainerSpec c) {
    return ALL.stream().anyMatch(r -> c.limits().containsKey(r) || c.requests().containsKey(r));
  }

  /**
   * Parses Kubernetes quantity text exactly, with the same parser the device vendors use ({@link
   * Quantities#parse}); empty when it is not a quantity.
   */
  static Optional<BigDecimal> parse(String text) {
    try {
      return Optional.of(Quantities.parse(text.trim()));
    } catch (InvalidQuantityException e) {
      return Optional.empty();
    }
  }

  static boolean isInteger(BigDecimal v) {
    return Quantities.isInteger(v);
  }
}
