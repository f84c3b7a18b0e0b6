package dev.hamilock.device.spi.model;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Objects;

/**
 * One container's request for one vendor's devices (HAMi {@code ContainerDeviceRequest}).
 *
 * @param nums number of devices (&gt; 0)
 * @param type vendor CommonWord, e.g. {@code NVIDIA}
 * @param memreq device memory per device in MiB; 0 = not set
 * @param mempercentagereq memory in percent of each device; {@value #PERCENTAGE_UNSET} = not set
 * @param coresreq compute per device in percent of one card
 */
public record ContainerDeviceRequest(
    int nums, String type, int memreq, int mempercentagereq, int coresreq) {

  /** HAMi's sentinel for "no memory percentage requested". */
  public static final int PERCENTAGE_UNSET = 101;

  public ContainerDeviceRequest {
    Objects.requireNonNull(type, "type");
    checkArgument(nums > 0, "nums must be positive: %s", nums);
    checkArgument(
        memreq >= 0 && coresreq >= 0 && mempercentagereq >= 0 && mempercentagereq <= 101,
        "memreq, coresreq must be >= 0 and mempercentagereq in 0..101: %s, %s, %s",
        memreq,
        coresreq,
        mempercentagereq);
  }
}
