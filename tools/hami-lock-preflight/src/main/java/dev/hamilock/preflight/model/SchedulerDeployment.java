package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.ManifestDocument;
import java.util.Objects;
import java.util.Optional;

/**
 * The HAMi scheduler's workload, recognised by a container that launches HAMi's scheduler extender
 * (named {@code vgpu-scheduler-extender}, or whose command is {@code scheduler}, or which passes a
 * {@code --node-lock-*} or {@code --http_bind} flag), as in HAMi's {@code
 * charts/hami/templates/scheduler/deployment.yaml}.
 *
 * @param template its pod template
 * @param serviceAccountName {@code spec.serviceAccountName} of the pod, when written (Kubernetes
 *     uses {@code default} when it is not)
 * @param extenderFlags the flags of its extender container
 * @param document its document
 */
public record SchedulerDeployment(
    PodTemplate template,
    Optional<String> serviceAccountName,
    ExtenderFlags extenderFlags,
    ManifestDocument document) {

  /** Validates non-null components. */
  public SchedulerDeployment {
    Objects.requireNonNull(template, "template");
    Objects.requireNonNull(serviceAccountName, "serviceAccountName");
    Objects.requireNonNull(extenderFlags, "extenderFlags");
    Objects.requireNonNull(document, "document");
  }
}
