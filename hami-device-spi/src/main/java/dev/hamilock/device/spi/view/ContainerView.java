package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One container of a pod, as the device vendors read it: name, image and the resource limits and
 * requests as exact decimal quantities (resource name, e.g. {@code nvidia.com/gpumem}, to value;
 * units are the resource's own, e.g. MiB for {@code nvidia.com/gpumem}).
 *
 * @param name container name (never null)
 * @param image image reference ("" when unknown)
 * @param limits {@code resources.limits}, immutable
 * @param requests {@code resources.requests}, immutable
 */
public record ContainerView(
    String name, String image, Map<String, BigDecimal> limits, Map<String, BigDecimal> requests) {

  /** Validates and copies the maps. */
  public ContainerView {
    Objects.requireNonNull(name, "name");
    image = image == null ? "" : image;
    limits = Map.copyOf(Objects.requireNonNull(limits, "limits"));
    requests = Map.copyOf(Objects.requireNonNull(requests, "requests"));
  }

  /**
   * Builds a view from Kubernetes quantity strings (as found in a pod manifest).
   *
   * @param name container name
   * @param image image reference, may be null
   * @param limits resource name to quantity text, e.g. {@code "16Gi"}
   * @param requests resource name to quantity text
   * @return the view with exact values
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

  /**
   * Kubernetes' effective value of one resource: the limit if set, else the request.
   *
   * @param resource resource name, e.g. {@code nvidia.com/gpu}
   * @return the limit, else the request, else empty
   */
  public Optional<BigDecimal> limitOrRequest(String resource) {
    BigDecimal v = limits.get(resource);
    return Optional.ofNullable(v != null ? v : requests.get(resource));
  }
}
