package dev.hamilock.device.spi.usage;

import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The device usage one pod contributes to its node (HAMi pod cache entry, spec §2.4): its entries
 * {@link UsageReconstructor#collapse collapsed}, or the decode error that makes the node unknown.
 *
 * @param nodeName the node the usage counts on: {@code spec.nodeName} for a bound pod, else {@code
 *     hami.io/vgpu-node}
 * @param devices collapsed entries ({@code slots} &ge; 1), sorted by vendor type then UUID
 * @param decodeError why the allocation could not be read, naming key and segment
 * @param nodeMismatch set when the pod is bound to another node than its {@code hami.io/vgpu-node}
 *     names (volcano#5532)
 */
public record PodUsage(
    String podKey,
    String uid,
    String nodeName,
    List<ContainerDevice> devices,
    Optional<String> decodeError,
    Optional<NodeMismatch> nodeMismatch) {

  public PodUsage {
    Objects.requireNonNull(nodeMismatch, "nodeMismatch");
    Objects.requireNonNull(podKey, "podKey");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(nodeName, "nodeName");
    devices = List.copyOf(devices);
    Objects.requireNonNull(decodeError, "decodeError");
  }

  public boolean decodable() {
    return decodeError.isEmpty();
  }
}
