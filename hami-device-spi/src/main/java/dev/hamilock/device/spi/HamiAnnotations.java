package dev.hamilock.device.spi;

/**
 * Vendor-neutral HAMi annotation and label keys ({@code pkg/util/types.go}, spec §2.2-2.4, §5.2).
 */
public final class HamiAnnotations {
  private HamiAnnotations() {}

  /** Pod annotation and label: node the devices were assigned on (usage accounting key). */
  public static final String VGPU_NODE = "hami.io/vgpu-node";

  /** Pod annotation: Unix seconds (decimal) of the Filter decision. */
  public static final String VGPU_TIME = "hami.io/vgpu-time";

  /** Pod annotation: bind phase ({@code allocating}, {@code success}, {@code failed}). */
  public static final String BIND_PHASE = "hami.io/bind-phase";

  /** Pod annotation: Unix seconds of the bind. */
  public static final String BIND_TIME = "hami.io/bind-time";

  /** Pod annotation overriding the device policy ({@code binpack}, {@code spread}, …). */
  public static final String GPU_SCHEDULER_POLICY = "hami.io/gpu-scheduler-policy";

  /** Pod annotation overriding the node policy ({@code binpack}, {@code spread}). */
  public static final String NODE_SCHEDULER_POLICY = "hami.io/node-scheduler-policy";

  /** Pod annotation: device score weights, e.g. {@code slot=1,core=1,memory=3}. */
  public static final String DEVICE_SCORING_WEIGHTS = "hami.io/device-scoring-weights";

  /** Node annotation: comma list of device UUIDs taking no new work. */
  public static final String DEVICE_CORDON = "hami.io/device-cordon";

  /** Node annotation: HAMi's shared node lock (NVIDIA and most vendors). */
  public static final String MUTEX_LOCK = "hami.io/mutex.lock";

  /** Pod label of gang membership (scheduler-plugins Coscheduling). */
  public static final String POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group";
}
