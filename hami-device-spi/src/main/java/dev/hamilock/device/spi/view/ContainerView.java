package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One container of a pod, as the device vendors read it; resource values are exact decimals in the
 * resource's own unit (e.g. MiB for {@code nvidia.com/gpumem}).
 *
 * @param image image reference ("" when unknown)
 * @param restartPolicy the container's {@code restartPolicy} text as given ({@code Always}, {@code
 *     OnFailure}, {@code Never}; Kubernetes &ge; 1.29), empty when absent or ""
 */
public record ContainerView(
    String name,
    String image,
    Map<String, BigDecimal> limits,
    Map<String, BigDecimal> requests,
    Optional<String> restartPolicy) {

  /** Kubernetes' {@code ContainerRestartPolicyAlways}: on an init container, a native sidecar. */
  public static final String RESTART_ALWAYS = "Always";

  public ContainerView {
    Objects.requireNonNull(name, "name");
    image = image == null ? "" : image;
    limits = Map.copyOf(Objects.requireNonNull(limits, "limits"));
    requests = Map.copyOf(Objects.requireNonNull(requests, "requests"));
    restartPolicy =
        restartPolicy == null ? Optional.empty() : restartPolicy.filter(s -> !s.isEmpty());
  }

  /** A container without a container-level {@code restartPolicy}; {@code image} may be null. */
  public ContainerView(
      String name, String image, Map<String, BigDecimal> limits, Map<String, BigDecimal> requests) {
    this(name, image, limits, requests, Optional.empty());
  }

  /** This container with the given {@code restartPolicy} (null or "" for none). */
  public ContainerView withRestartPolicy(String policy) {
    return new ContainerView(name, image, limits, requests, Optional.ofNullable(policy));
  }

  /**
   * Kubernetes' {@code isRestartableInitContainer} ({@code k8s.io/component-helpers/resource}
   * {@code helpers.go}, v0.37): the restart policy is {@code Always} (a native sidecar).
   */
  public boolean isRestartable() {
    return restartPolicy.filter(RESTART_ALWAYS::equals).isPresent();
  }

  /**
   * A view from Kubernetes quantity strings (e.g. {@code "16Gi"}); {@code image} may be null.
   *
   * @throws InvalidQuantityException naming the first malformed value (and its resource)
   */
  public static ContainerView ofQuantities(
      String name, String image, Map<String, String> limits, Map<String, String> requests)
      throws InvalidQuantityException {
    return new ContainerView(name, image, parseAll(name, limits), parseAll(name, requests));
  }

  private static Map<String, BigDecimal> parseAll(String container, Map<String, String> in)
      throws InvalidQuantityException {
    Map<String, BigDecimal> out = new LinkedHashMap<>();
    if (in == null) {
      return out;
    }
    for (Map.Entry<String, String> e : in.entrySet()) {
      try {
        out.put(e.getKey(), Quantities.parse(Objects.requireNonNull(e.getValue(), e.getKey())));
      } catch (InvalidQuantityException ex) {
        throw new InvalidQuantityException(
            ex.value(),
            "container " + container + " resource " + e.getKey() + ": " + ex.getMessage());
      }
    }
    return out;
  }

  /** Kubernetes' effective value of one resource: the limit if set, else the request. */
  public Optional<BigDecimal> limitOrRequest(String resource) {
    BigDecimal v = limits.get(resource);
    return Optional.ofNullable(v != null ? v : requests.get(resource));
  }
}
