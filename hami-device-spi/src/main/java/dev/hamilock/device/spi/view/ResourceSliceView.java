package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The parts of a {@code resource.k8s.io/v1} ResourceSlice the device layer reads to map a DRA
 * allocation to a registered card ({@code k8s.io/api} {@code resource/v1/types.go} {@code
 * ResourceSliceSpec}); only a pool's highest generation is current.
 *
 * @param pool {@code spec.pool.name} (the node name for both NVIDIA's and HAMi's drivers)
 * @param nodeName {@code spec.nodeName}; "" when the pool is not local to one node
 */
public record ResourceSliceView(
    String name,
    String driver,
    String pool,
    long generation,
    String nodeName,
    List<Device> devices) {

  public ResourceSliceView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(nodeName, "nodeName");
    devices = List.copyOf(devices);
  }

  /**
   * @param name device name, unique in the driver's pool (e.g. {@code gpu-0})
   * @param attributes attribute name as published to its value as text (non-strings as JSON)
   * @param capacity capacity name to its {@code value} (exact; {@code memory} in bytes), immutable
   */
  public record Device(
      String name, Map<String, String> attributes, Map<String, BigDecimal> capacity) {
    public Device {
      Objects.requireNonNull(name, "name");
      attributes = Map.copyOf(attributes);
      capacity = Map.copyOf(capacity);
    }
  }
}
