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
   * @return the {@code --node-lock-retry-timeout} value, a Go duration
   * @throws IllegalStateException for {@link #FLOOR}, which starts no extender
   */
  public String retryTimeout() {
    if (!hasExtender()) {
      throw new IllegalStateException(label + " runs without an extender");
    }
    return retryTimeout;
  }

  /**
   * @return whether kube-scheduler calls an extender process in this mode
   */
  public boolean hasExtender() {
    return this != FLOOR;
  }

  /**
   * @return the modes that start an extender process, in the order they run
   */
  public static java.util.List<ExtenderMode> withExtender() {
    return java.util.List.of(GANG_RETRY, FAIL_FAST);
  }
}
