package dev.hamilock.device.spi.view;

/**
 * When a container runs, which decides how its device amounts add up (Kubernetes' {@code
 * PodRequests}, KEP-753); see {@link PodView#containerRoles()}.
 */
public enum ContainerRole {
  /** A run-to-completion init container: runs beside the sidecars declared before it. */
  INIT,
  /** A native sidecar ({@code restartPolicy: Always}): runs from its start to the pod's end. */
  SIDECAR,
  /** A regular container ({@code spec.containers}): all of them run together, with all sidecars. */
  APP
}
