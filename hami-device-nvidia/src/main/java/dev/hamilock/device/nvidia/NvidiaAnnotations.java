package dev.hamilock.device.nvidia;

/** NVIDIA annotation keys (HAMi {@code pkg/device/nvidia/device.go}, spec §5.2). */
public final class NvidiaAnnotations {
  private NvidiaAnnotations() {}

  /** Node: device registration (JSON since HAMi v2.8, colon before; both accepted). */
  public static final String REGISTER = "hami.io/node-nvidia-register";

  /** Node: GPU pair scores (topology-aware policy). */
  public static final String PAIR_SCORE = "hami.io/node-nvidia-score";

  /** Pod: devices for the device plugin to allocate. */
  public static final String TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate";

  /** Pod: devices allocated (read for usage). */
  public static final String ALLOCATED = "hami.io/vgpu-devices-allocated";

  /** Pod: comma list of card-type substrings to use (case-insensitive). */
  public static final String USE_GPUTYPE = "nvidia.com/use-gputype";

  /** Pod: comma list of card-type substrings to avoid (case-insensitive). */
  public static final String NOUSE_GPUTYPE = "nvidia.com/nouse-gputype";

  /** Pod: comma list of exact GPU UUIDs to use. */
  public static final String USE_GPUUUID = "nvidia.com/use-gpuuuid";

  /** Pod: comma list of exact GPU UUIDs to avoid (wins over use). */
  public static final String NOUSE_GPUUUID = "nvidia.com/nouse-gpuuuid";

  /** Pod: device mode must be a substring of this value ({@code hami-core}, {@code mig}, ...). */
  public static final String VGPU_MODE = "nvidia.com/vgpu-mode";
}
