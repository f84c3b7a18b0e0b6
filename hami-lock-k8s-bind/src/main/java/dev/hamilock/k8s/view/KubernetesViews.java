package dev.hamilock.k8s.view;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.KubernetesLockOwners;
import dev.hamilock.k8s.internal.PodMetadata;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerExtendedResourceRequest;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodResourceClaim;
import io.kubernetes.client.openapi.models.V1PodResourceClaimStatus;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1ResourceRequirements;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Maps client-java's {@link V1Pod} and {@link V1Node} to the spi's {@link PodView} and {@link
 * NodeView}, as {@code JsonViews} maps JSON. Quantities are copied exactly ({@link
 * Quantity#getNumber()}, {@code 16Gi} = 17179869184), never rounded. Stateless.
 */
public final class KubernetesViews {

  private KubernetesViews() {}

  /**
   * @param pod a pod with {@code metadata.namespace} and {@code metadata.name}
   * @return the pod view (phase empty/absent ⇒ PENDING; unknown phase text ⇒ UNKNOWN)
   * @throws NullPointerException if {@code pod} is null
   * @throws IllegalArgumentException naming the field if metadata, namespace or name is missing, or
   *     a container has no name
   */
  public static PodView podView(V1Pod pod) {
    V1ObjectMeta meta = PodMetadata.require(pod);
    V1PodSpec spec = pod.getSpec();
    PodView.Builder b =
        PodView.builder(meta.getNamespace(), meta.getName())
            .uid(meta.getUid())
            .labels(copy(meta.getLabels()))
            .annotations(copy(meta.getAnnotations()))
            .podGroupName(KubernetesLockOwners.podGroupName(pod).orElse(null))
            .phase(
                PodView.Phase.fromKubernetes(
                    pod.getStatus() == null ? null : pod.getStatus().getPhase()))
            .deleting(meta.getDeletionTimestamp() != null)
            .unschedulable(
                pod.getStatus() != null
                    && pod.getStatus().getConditions() != null
                    && pod.getStatus().getConditions().stream()
                        .filter(c -> "PodScheduled".equals(c.getType()))
                        .findFirst()
                        .filter(c -> "False".equals(c.getStatus()))
                        .filter(c -> "Unschedulable".equals(c.getReason()))
                        .isPresent());
    if (spec != null) {
      b.initContainers(containers(spec.getInitContainers()));
      b.containers(containers(spec.getContainers()));
      b.nodeName(spec.getNodeName());
      b.priority(spec.getPriority() == null ? 0 : spec.getPriority());
      b.preemptionPolicy(spec.getPreemptionPolicy());
    }
    b.draResources(draResources(pod));
    b.resourceClaimNames(resourceClaimNames(pod));
    return b.build();
  }

  /**
   * @param node a node with {@code metadata.name}
   * @return the node view with {@code status.allocatable} as exact decimals
   * @throws NullPointerException if {@code node} is null
   * @throws IllegalArgumentException naming the field if metadata or name is missing
   */
  public static NodeView nodeView(V1Node node) {
    Objects.requireNonNull(node, "node");
    V1ObjectMeta meta = node.getMetadata();
    checkArgument(
        meta != null && meta.getName() != null && !meta.getName().isEmpty(),
        "node metadata.name must be set: %s",
        meta == null ? "no metadata" : meta.getName());
    Map<String, Quantity> allocatable =
        node.getStatus() == null ? null : node.getStatus().getAllocatable();
    return new NodeView(
        meta.getName(),
        copy(meta.getLabels()),
        copy(meta.getAnnotations()),
        quantities(allocatable));
  }

  /** {@code status.extendedResourceClaimStatus.requestMappings[].resourceName}. */
  private static Set<String> draResources(V1Pod pod) {
    var status = pod.getStatus() == null ? null : pod.getStatus().getExtendedResourceClaimStatus();
    Set<String> out = new TreeSet<>();
    if (status != null && status.getRequestMappings() != null) {
      for (V1ContainerExtendedResourceRequest r : status.getRequestMappings()) {
        if (r != null && r.getResourceName() != null && !r.getResourceName().isEmpty()) {
          out.add(r.getResourceName());
        }
      }
    }
    return out;
  }

  /**
   * {@code spec.resourceClaims[].resourceClaimName}, {@code
   * status.resourceClaimStatuses[].resourceClaimName}, {@code
   * status.extendedResourceClaimStatus.resourceClaimName}: each when set and non-empty.
   */
  private static Set<String> resourceClaimNames(V1Pod pod) {
    List<String> names = new ArrayList<>();
    if (pod.getSpec() != null && pod.getSpec().getResourceClaims() != null) {
      for (V1PodResourceClaim c : pod.getSpec().getResourceClaims()) {
        names.add(c == null ? null : c.getResourceClaimName());
      }
    }
    V1PodStatus status = pod.getStatus();
    if (status != null && status.getResourceClaimStatuses() != null) {
      for (V1PodResourceClaimStatus c : status.getResourceClaimStatuses()) {
        names.add(c == null ? null : c.getResourceClaimName());
      }
    }
    if (status != null && status.getExtendedResourceClaimStatus() != null) {
      names.add(status.getExtendedResourceClaimStatus().getResourceClaimName());
    }
    Set<String> out = new TreeSet<>();
    names.stream().filter(n -> n != null && !n.isEmpty()).forEach(out::add);
    return out;
  }

  private static List<ContainerView> containers(List<V1Container> in) {
    List<ContainerView> out = new ArrayList<>();
    for (V1Container c : in == null ? List.<V1Container>of() : in) {
      checkArgument(c.getName() != null, "container name must be set (image %s)", c.getImage());
      V1ResourceRequirements r = c.getResources();
      out.add(
          new ContainerView(
              c.getName(),
              c.getImage(),
              quantities(r == null ? null : r.getLimits()),
              quantities(r == null ? null : r.getRequests()),
              Optional.ofNullable(c.getRestartPolicy())));
    }
    return out;
  }

  private static Map<String, BigDecimal> quantities(Map<String, Quantity> in) {
    Map<String, BigDecimal> out = new LinkedHashMap<>();
    if (in != null) {
      in.forEach(
          (k, v) -> {
            if (k != null && v != null && v.getNumber() != null) {
              out.put(k, v.getNumber());
            }
          });
    }
    return out;
  }

  private static Map<String, String> copy(Map<String, String> in) {
    return in == null ? Map.of() : new LinkedHashMap<>(in);
  }
}
