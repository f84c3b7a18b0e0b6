package dev.hamilock.examples.gang.real;

/** How the extender process is started: HAMi's gang retry, or fail-fast. */
public enum ExtenderMode {
  /**
   * {@code --node-lock-retry-timeout=28s}, the guide's value: gang members wait for the node lock.
   */
  GANG_RETRY("gang retry", "28s"),
  /**
   * {@code --node-lock-retry-timeout=0}: a contended bind fails and kube-scheduler re-queues the
   * pod with its backoff.
   */
  FAIL_FAST("fail-fast", "0");

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
   */
  public String retryTimeout() {
    return retryTimeout;
  }
}
