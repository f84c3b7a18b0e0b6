package dev.hamilock.reference;

import java.util.Objects;

/**
 * One device entry of a pod-devices annotation, HAMi's {@code ContainerDevice} ({@code
 * pkg/device/devices.go}); wire form {@code uuid,type,usedmem,usedcores}.
 *
 * @param uuid device UUID, e.g. {@code GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448}
 * @param type vendor key, e.g. {@code NVIDIA}
 * @param usedMem memory handed out, MiB (int32 on the wire)
 * @param usedCores compute handed out, % of one card (int32 on the wire)
 */
public record ContainerDevice(String uuid, String type, int usedMem, int usedCores) {

  /**
   * @throws NullPointerException if uuid or type is null
   */
  public ContainerDevice {
    Objects.requireNonNull(uuid, "uuid");
    Objects.requireNonNull(type, "type");
  }
}
