package dev.hamilock.extender.v1;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The extender's answer to the preempt verb: Go {@code ExtenderPreemptionResult} of {@code
 * k8s.io/kube-scheduler/extender/v1/types.go} (v0.37.2), wire key {@code NodeNameToMetaVictims}.
 * There is no {@code Error} field: failures are a non-200 status.
 *
 * @param nodeNameToMetaVictims node name to victims; empty = null; sorted by node name
 */
public record ExtenderPreemptionResult(Optional<Map<String, MetaVictims>> nodeNameToMetaVictims) {

  public ExtenderPreemptionResult {
    nodeNameToMetaVictims =
        Objects.requireNonNull(nodeNameToMetaVictims, "nodeNameToMetaVictims")
            .map(ExtenderPreemptionResult::sorted);
  }

  /** A node-keyed map sorted by node name, as Go writes it; null keys and values refused. */
  static <V> Map<String, V> sorted(Map<String, V> m) {
    TreeMap<String, V> t = new TreeMap<>();
    m.forEach(
        (k, v) ->
            t.put(Objects.requireNonNull(k, "node name"), Objects.requireNonNull(v, "value")));
    return Collections.unmodifiableMap(t);
  }
}
