package dev.hamilock.device.spi.view;

/**
 * When a container of a pod runs, which decides how its device amounts add up with the others'
 * (Kubernetes' {@code PodRequests}, {@code k8s.io/component-helpers/resource} {@code helpers.go}
 * v0.37; KEP-753 "sidecar containers"). Given per container by {@link PodView#containerRoles()}.
 */
public enum ContainerRole {
  /**
   * A run-to-completion init container ({@code spec.initContainers} without {@code restartPolicy:
   * Always}): runs alone among the init containers, after every earlier one has ended, beside the
   * sidecars declared before it; ended before the app containers start.
   */
  INIT,
  /**
   * A native sidecar ({@code spec.initContainers} with {@code restartPolicy: Always}, Kubernetes
   * &ge; 1.29, GA in 1.33): from its start it runs beside every later init container and for the
   * whole app phase.
   */
  SIDECAR,
  /** A regular container ({@code spec.containers}): all of them run together, with all sidecars. */
  APP
}
