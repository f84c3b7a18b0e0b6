package dev.hamilock.device.spi.usage;

import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The ResourceSlices and ResourceClaims ({@code resource.k8s.io/v1}) usage counts DRA allocations
 * from: at least those of the nodes being counted (others are ignored).
 *
 * @param slices ResourceSlices, immutable
 * @param claims ResourceClaims (allocated or not), immutable
 */
public record DraObjects(List<ResourceSliceView> slices, List<ResourceClaimView> claims) {
  /** No DRA objects: usage is that of HAMi's annotations alone. */
  public static final DraObjects NONE = new DraObjects(List.of(), List.of());

  public DraObjects {
    slices = List.copyOf(slices);
    claims = List.copyOf(claims);
  }

  /**
   * Whether these objects show DRA devices on {@code node}: a ResourceSlice whose {@link
   * ResourceSliceView#nodeName()} is the node, or without one whose pool is named after it, or an
   * {@link ResourceClaimView#allocated() allocated} claim whose {@link
   * ResourceClaimView#allocationNode()} is the node, or without one with a result in a pool named
   * after it (the usage counts a device on the node by its slice's node, else the claim's
   * allocation node, else the pool name: {@code DraUsage}). A node with none has no DRA usage in
   * these objects, whatever their age.
   *
   * @param node the node name
   * @throws NullPointerException if {@code node} is null
   */
  public boolean devicesOn(String node) {
    Objects.requireNonNull(node, "node");
    return slices.stream()
            .anyMatch(
                s -> s.nodeName().equals(node) || (s.nodeName().isEmpty() && s.pool().equals(node)))
        || claims.stream()
            .anyMatch(
                c ->
                    c.allocated()
                        && (c.allocationNode().equals(node)
                            || (c.allocationNode().isEmpty()
                                && c.results().stream().anyMatch(r -> r.pool().equals(node)))));
  }

  /**
   * Whether these claims hold the final allocation of every claim the given pods use: for each pod
   * and each of its {@link PodView#resourceClaimNames()}, the claim {@code namespace/name} (the
   * pod's namespace) is in {@link #claims()}, {@link ResourceClaimView#allocated() allocated}, and
   * {@link ResourceClaimView#reservedFor() reserved for} the pod's {@link PodView#uid()}.
   *
   * <p>Why that suffices: kube-scheduler's DynamicResources plugin writes a claim's {@code
   * status.allocation} and its pod's {@code status.reservedFor} entry in one status update at
   * PreBind ({@code bindClaim} in {@code
   * pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go}, v1.37), and an
   * allocation is immutable once set; so a copy of a claim (a watch-cache snapshot, say) that is
   * allocated and reserved for the pod holds the same allocation as a consistent read would. A
   * claim missing from {@link #claims()} fails the check: no allocation is assumed absent.
   *
   * @param pods the pods whose claims must be confirmed
   * @return empty when every named claim is confirmed (also when no pod names a claim), else the
   *     first failure (pods in order, a pod's claims by name), e.g. {@code pod ns/p: claim ns/c not
   *     reserved for uid u-1}
   * @throws NullPointerException if {@code pods} or one of its pods is null
   */
  public Optional<String> unconfirmedClaim(Collection<PodView> pods) {
    Objects.requireNonNull(pods, "pods");
    Map<String, ResourceClaimView> byKey = new HashMap<>();
    claims.forEach(c -> byKey.put(c.key(), c));
    for (PodView pod : pods) {
      Objects.requireNonNull(pod, "pod");
      for (String name : new TreeSet<>(pod.resourceClaimNames())) {
        String key = pod.namespace() + "/" + name;
        ResourceClaimView claim = byKey.get(key);
        String why =
            claim == null
                ? "not in the snapshot"
                : !claim.allocated()
                    ? "not allocated"
                    : !claim.reservedFor().contains(pod.uid())
                        ? "not reserved for uid " + pod.uid()
                        : null;
        if (why != null) {
          return Optional.of("pod " + pod.key() + ": claim " + key + " " + why);
        }
      }
    }
    return Optional.empty();
  }
}
