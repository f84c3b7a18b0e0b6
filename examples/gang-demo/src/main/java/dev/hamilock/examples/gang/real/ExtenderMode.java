package dev.hamilock.examples.gang.real;

/**
 * How a run is scheduled: through the extender process with HAMi's gang retry or fail-fast, or the
 * control plane's floor with no extender at all.
 */
public enum ExtenderMode {
  /**
   * {@code --node-lock-retry-timeout=28s}, the guide's value: gang members wait for the node lock.
   */
  GANG_RETRY("gang retry", "28s"),
  /**
   * {@code --node-lock-retry-timeout=0}: a contended bind fails and kube-scheduler re-queues the
   * pod with its backoff.
   */
  FAIL_FAST("fail-fast", "0"),
  /**
   * {@code --gpu-preemption} (and the guide's 28s retry): the extender evicts lower-priority pods
   * for a pod that fits nowhere for GPU reasons ({@link PreemptionScenario}); started only when
   * that scenario runs.
   */
  GPU_PREEMPTION("gpu preemption", "28s"),
  /**
   * No extender and no lock: kube-scheduler alone places pods that ask for the GPU as an ordinary
   * extended resource ({@link RealSchedulerCluster#FLOOR_RESOURCE}), pinned by node affinity to the
   * nodes the gang-retry run chose, and the simulated kubelet marks each Running {@link
   * RealSchedulerCluster#ALLOCATE_MS} ms after it sees it bound (testing/realcluster/SCHEDULER.md,
   * "The floor").
   */
  FLOOR("floor", "");

  private final String label;
  private final String retryTimeout;

  ExtenderMode(String label, String retryTimeout) {
    this.label = label;
    this.retryTimeout = retryTimeout;
  }

  /**
   * @return the report's name for it
   */
  public String label() {
    return label;
  }

  /**
   * @return whether kube-scheduler calls an extender process in this mode
   */
  public boolean hasExtender() {
    return this != FLOOR;
  }

  /**
   * @return the extender's command-line flags besides the connection's: {@code
   *     --node-lock-retry-timeout}, and {@code --gpu-preemption} for {@link #GPU_PREEMPTION}
   * @throws IllegalStateException for {@link #FLOOR}, which starts no extender
   */
  public java.util.List<String> flags() {
    if (!hasExtender()) {
      throw new IllegalStateException(label + " runs without an extender");
    }
    String retry = "--node-lock-retry-timeout=" + retryTimeout;
    return this == GPU_PREEMPTION
        ? java.util.List.of(retry, "--gpu-preemption")
        : java.util.List.of(retry);
  }

  /**
   * @return the modes the gang scenarios run in, each an extender process started with the cluster,
   *     in the order they run
   */
  public static java.util.List<ExtenderMode> withExtender() {
    return java.util.List.of(GANG_RETRY, FAIL_FAST);
  }
}
