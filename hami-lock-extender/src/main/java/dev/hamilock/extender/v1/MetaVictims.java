package dev.hamilock.extender.v1;

import java.util.List;

/**
 * One node's victims by UID: Go {@code MetaVictims} of {@code
 * k8s.io/kube-scheduler/extender/v1/types.go} (v0.37.2), wire keys {@code Pods}, {@code
 * NumPDBViolations}.
 *
 * @param pods the victims, in order; a null {@code Pods} decodes to empty, empty encodes as {@code
 *     []}
 * @param numPDBViolations victims whose eviction a PodDisruptionBudget does not allow (Go int64)
 */
public record MetaVictims(List<MetaPod> pods, long numPDBViolations) {
  public MetaVictims {
    pods = List.copyOf(pods);
  }
}
