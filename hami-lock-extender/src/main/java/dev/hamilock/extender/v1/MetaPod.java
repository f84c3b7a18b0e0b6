package dev.hamilock.extender.v1;

import java.util.Objects;

/**
 * A pod named by UID only: Go {@code MetaPod} of {@code k8s.io/kube-scheduler/extender/v1/types.go}
 * (v0.37.2), wire key {@code UID}.
 *
 * @param uid {@code metadata.uid} ("" when the key is absent or null)
 */
public record MetaPod(String uid) {
  public MetaPod {
    Objects.requireNonNull(uid, "uid");
  }
}
