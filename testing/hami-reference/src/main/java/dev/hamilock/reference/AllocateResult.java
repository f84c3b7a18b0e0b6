package dev.hamilock.reference;

import io.kubernetes.client.openapi.models.V1Pod;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Outcome of one {@link HamiDevicePlugin#allocate} call (one kubelet {@code Allocate} RPC).
 *
 * @param pod the pod the plugin chose ({@code GetPendingPod}); empty if none was found
 * @param containerDevices devices handed out, one list per container request of the call, in
 *     request order (only the requests served before any failure)
 * @param success whether {@code Allocate} returned without error
 * @param bindPhaseWritten the {@code hami.io/bind-phase} value the completion tried to write:
 *     {@code success} (all NVIDIA entries consumed; lock released), {@code failed} (an error after
 *     the pod was found; lock released), or empty (more containers pending, or no pod)
 * @param error the error {@code Allocate} returned, if any
 */
public record AllocateResult(
    Optional<V1Pod> pod,
    List<List<ContainerDevice>> containerDevices,
    boolean success,
    Optional<String> bindPhaseWritten,
    Optional<Exception> error) {

  /** Copies the lists; @throws NullPointerException if any component is null. */
  public AllocateResult {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(bindPhaseWritten, "bindPhaseWritten");
    Objects.requireNonNull(error, "error");
    containerDevices = containerDevices.stream().map(List::copyOf).toList();
  }
}
