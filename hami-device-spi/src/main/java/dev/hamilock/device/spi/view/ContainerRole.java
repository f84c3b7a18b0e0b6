package dev.hamilock.device.spi.view;

/**
 * When a container of a pod runs, which decides how its device amounts add up with the others'
 * (Kubernetes' {@code PodRequests}, {@code k8s.io/component-helpers/resource} {@code helpers.go}
 * v0.37; KEP-753 "sidecar containers"). Given per container by {@link PodView#containerRoles()}.
 */
public enum ContainerRole {
  /** A run-to-completion init container: runs beside the sidecars declared before it. */
  INIT,
  /** A native sidecar ({@code restartPolicy: Always}): runs from its start to the pod's end. */
  SIDECAR,
  /** A regular container ({@code spec.containers}): all of them run together, with all sidecars. */
  APP
}
