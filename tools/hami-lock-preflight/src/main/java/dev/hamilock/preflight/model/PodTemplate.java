package dev.hamilock.preflight.model;

import dev.hamilock.core.GangMembership;
import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.YamlPath;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The pods one document creates: a Pod itself, or the pod template of a Deployment, StatefulSet,
 * ReplicaSet, ReplicationController, DaemonSet, Job, CronJob, PodTemplate or any other object with
 * {@code spec.template.spec.containers}.
 *
 * @param kind the owner's {@code kind}
 * @param name the owner's {@code metadata.name}, or {@code ""}
 * @param namespace the owner's {@code metadata.namespace}, when written
 * @param podCount how many pods it runs at once, when known: 1 for a Pod, {@code replicas} (default
 *     1) for Deployment/StatefulSet/ReplicaSet/ReplicationController, {@code min(parallelism,
 *     completions)} (parallelism default 1) for a Job or CronJob's job template, 0 for a suspended
 *     Job; unknown for a DaemonSet
 * @param templatePath path of the pod's object (the part with {@code metadata} and {@code spec}),
 *     e.g. {@code spec.template}; empty for a Pod
 * @param labels the pod's {@code metadata.labels}
 * @param annotations the pod's {@code metadata.annotations}
 * @param ownerLabels the owner's own {@code metadata.labels} (empty for a Pod)
 * @param schedulerName the pod's {@code spec.schedulerName}, when written
 * @param schedulingGroup the pod's {@code spec.schedulingGroup.podGroupName}, when written
 * @param containers init containers and containers, in that order
 * @param document the owner document
 */
public record PodTemplate(
    String kind,
    String name,
    Optional<String> namespace,
    OptionalInt podCount,
    String templatePath,
    Map<String, String> labels,
    Map<String, String> annotations,
    Map<String, String> ownerLabels,
    Optional<String> schedulerName,
    Optional<String> schedulingGroup,
    List<ContainerSpec> containers,
    ManifestDocument document) {

  /**
   * Label naming a scheduler-plugins PodGroup (read by Coscheduling and HAMi's {@code
   * IsPodGroupMember}).
   */
  public static final String POD_GROUP_LABEL = GangMembership.POD_GROUP_LABEL;

  /** Copies collections; validates non-null components. */
  public PodTemplate {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(podCount, "podCount");
    Objects.requireNonNull(templatePath, "templatePath");
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
    ownerLabels = Map.copyOf(ownerLabels);
    Objects.requireNonNull(schedulerName, "schedulerName");
    Objects.requireNonNull(schedulingGroup, "schedulingGroup");
    containers = List.copyOf(containers);
    Objects.requireNonNull(document, "document");
  }

  /**
   * @return {@code spec.schedulerName}, or {@code default-scheduler} when not written
   */
  public String effectiveSchedulerName() {
    return schedulerName.orElse(SchedulerProfile.DEFAULT_SCHEDULER_NAME);
  }

  /**
   * @return the non-empty value of the {@value #POD_GROUP_LABEL} label, when present
   */
  public Optional<String> podGroupLabel() {
    return Optional.ofNullable(labels.get(POD_GROUP_LABEL)).filter(v -> !v.isEmpty());
  }

  /**
   * HAMi's {@code IsPodGroupMember} (spec §1.11), as implemented by hami-lock-core's {@link
   * GangMembership#isMember}: the pod-group label is non-empty or {@code
   * spec.schedulingGroup.podGroupName} is non-empty.
   *
   * @return whether HAMi treats these pods as gang members
   */
  public boolean isGangMember() {
    return GangMembership.isMember(labels, schedulingGroup);
  }

  /**
   * @return e.g. {@code Deployment default/trainer} or {@code Pod gang-worker-1}
   */
  public String describe() {
    return kind
        + " "
        + namespace.map(ns -> ns + "/").orElse("")
        + (name.isEmpty() ? "(unnamed)" : name);
  }

  /**
   * @param relative a path below the pod object (e.g. {@code metadata.labels}) — joined to {@link
   *     #templatePath()}
   * @return its location
   */
  public Location location(String relative) {
    return document.location(YamlPath.join(templatePath, relative));
  }
}
