package dev.hamilock.extender.v1;

import java.util.Objects;

/**
 * The extender's answer to the bind verb: Go {@code ExtenderBindingResult} of {@code
 * k8s.io/kube-scheduler/extender/v1/types.go}, wire key {@code Error}. HAMi's {@code routes.Bind}
 * always answers HTTP 200, with the failure text in {@code Error}.
 *
 * @param error "" on success, else the reason, e.g. {@code node node-g has been locked within 5
 *     minutes} or {@code timed out after 28s waiting for node node-a to be unlocked: node lock
 *     contention}
 */
public record ExtenderBindingResult(String error) {
  /** A successful bind: {@code {"Error":""}}. */
  public static final ExtenderBindingResult OK = new ExtenderBindingResult("");

  public ExtenderBindingResult {
    Objects.requireNonNull(error, "error");
  }

  /** Whether the bind succeeded ({@link #error()} empty). */
  public boolean isSuccess() {
    return error.isEmpty();
  }
}
