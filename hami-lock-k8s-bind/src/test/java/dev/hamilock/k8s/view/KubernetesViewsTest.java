package dev.hamilock.k8s.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockOwner;
import dev.hamilock.device.spi.view.ContainerRole;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.KubernetesLockOwners;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodResourceClaim;
import io.kubernetes.client.openapi.models.V1PodResourceClaimStatus;
import io.kubernetes.client.openapi.models.V1PodSchedulingGroup;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1ResourceRequirements;
import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KubernetesViewsTest {

  @Test
  void podViewCopiesIdentityPhaseGroupAndExactQuantities() {
    V1Pod pod =
        new V1Pod()
            .metadata(
                new V1ObjectMeta()
                    .namespace("ns")
                    .name("p")
                    .uid("u-1")
                    .labels(Map.of("a", "b"))
                    .annotations(Map.of("hami.io/vgpu-node", "n1"))
                    .deletionTimestamp(OffsetDateTime.now()))
            .spec(
                new V1PodSpec()
                    .schedulingGroup(new V1PodSchedulingGroup().podGroupName("job"))
                    .initContainers(
                        List.of(
                            new V1Container().name("init").image("busybox"),
                            new V1Container().name("proxy").image("envoy").restartPolicy("Always")))
                    .containers(
                        List.of(
                            new V1Container()
                                .name("main")
                                .image("cuda")
                                .resources(
                                    new V1ResourceRequirements()
                                        .limits(
                                            Map.of(
                                                "nvidia.com/gpu",
                                                Quantity.fromString("1"),
                                                "nvidia.com/gpumem",
                                                Quantity.fromString("16Gi")))
                                        .requests(Map.of("cpu", Quantity.fromString("500m")))))))
            .status(new V1PodStatus().phase("Running"));
    PodView v = KubernetesViews.podView(pod);
    assertThat(v.key()).isEqualTo("ns/p");
    assertThat(v.uid()).isEqualTo("u-1");
    assertThat(v.labels()).containsEntry("a", "b");
    assertThat(v.annotations()).containsEntry("hami.io/vgpu-node", "n1");
    assertThat(v.podGroupName()).contains("job");
    assertThat(v.phase()).isEqualTo(PodView.Phase.RUNNING);
    assertThat(v.deleting()).isTrue();
    assertThat(v.initContainers()).extracting(c -> c.name()).containsExactly("init", "proxy");
    assertThat(v.containerRoles())
        .as("a native sidecar")
        .containsExactly(ContainerRole.INIT, ContainerRole.SIDECAR, ContainerRole.APP);
    assertThat(v.containers().get(0).limits().get("nvidia.com/gpumem"))
        .isEqualByComparingTo(new BigDecimal("17179869184"));
    assertThat(v.containers().get(0).requests().get("cpu"))
        .isEqualByComparingTo(new BigDecimal("0.5"));
    assertThat(KubernetesLockOwners.lockOwner(pod)).isEqualTo(LockOwner.of("ns", "p", "u-1"));
  }

  /**
   * kube-scheduler's DRA route for an extended resource (DRAExtendedResource) is recorded in {@code
   * status.extendedResourceClaimStatus}; {@link dev.hamilock.device.spi.view.JsonViews} reads it
   * into {@link PodView#draResources()}, and so must the typed mapper the extender's pod informer
   * uses (its Filter counts a pod's devices from its claim, not also from its annotations).
   */
  @Test
  void podViewCarriesTheExtendedResourcesKubeSchedulerGaveThroughDra() {
    V1Pod pod =
        new V1Pod()
            .metadata(new V1ObjectMeta().namespace("ns").name("p").uid("u-1"))
            .status(
                new V1PodStatus()
                    .phase("Running")
                    .extendedResourceClaimStatus(
                        new io.kubernetes.client.openapi.models.V1PodExtendedResourceClaimStatus()
                            .resourceClaimName("p-extended-resources-x")
                            .requestMappings(
                                List.of(
                                    new io.kubernetes.client.openapi.models
                                            .V1ContainerExtendedResourceRequest()
                                        .containerName("main")
                                        .requestName("container-0-request-0")
                                        .resourceName("nvidia.com/gpu")))));
    assertThat(KubernetesViews.podView(pod).draResources()).containsExactly("nvidia.com/gpu");
  }

  /**
   * The claims a pod uses, as {@code JsonViews} reads them into {@link PodView#resourceClaimNames}.
   */
  @Test
  void podViewCarriesTheNamesOfTheClaimsThePodUses() {
    V1Pod pod =
        new V1Pod()
            .metadata(new V1ObjectMeta().namespace("ns").name("p").uid("u-1"))
            .spec(
                new V1PodSpec()
                    .resourceClaims(
                        List.of(
                            new V1PodResourceClaim().name("a").resourceClaimName("shared"),
                            new V1PodResourceClaim().name("b").resourceClaimTemplateName("t"))))
            .status(
                new V1PodStatus()
                    .resourceClaimStatuses(
                        List.of(
                            new V1PodResourceClaimStatus().name("b").resourceClaimName("p-b-x"),
                            new V1PodResourceClaimStatus().name("c")))
                    .extendedResourceClaimStatus(
                        new io.kubernetes.client.openapi.models.V1PodExtendedResourceClaimStatus()
                            .resourceClaimName("p-extended-resources-x")));
    assertThat(KubernetesViews.podView(pod).resourceClaimNames())
        .containsExactlyInAnyOrder("shared", "p-b-x", "p-extended-resources-x");
    assertThat(
            KubernetesViews.podView(
                    new V1Pod().metadata(new V1ObjectMeta().namespace("ns").name("p")))
                .resourceClaimNames())
        .isEmpty();
  }

  @Test
  void minimalPodMapsToDefaults() {
    PodView v =
        KubernetesViews.podView(new V1Pod().metadata(new V1ObjectMeta().namespace("ns").name("p")));
    assertThat(v.phase()).isEqualTo(PodView.Phase.PENDING);
    assertThat(v.podGroupName()).isEmpty();
    assertThat(v.containers()).isEmpty();
    assertThat(v.deleting()).isFalse();
    assertThat(
            KubernetesLockOwners.lockOwner(
                    new V1Pod().metadata(new V1ObjectMeta().namespace("ns").name("p")))
                .uid())
        .isEmpty();
  }

  @Test
  void nodeViewCopiesAllocatableExactly() {
    NodeView v =
        KubernetesViews.nodeView(
            new V1Node()
                .metadata(
                    new V1ObjectMeta()
                        .name("n1")
                        .annotations(Map.of("hami.io/node-nvidia-register", "[]")))
                .status(
                    new V1NodeStatus()
                        .allocatable(
                            Map.of(
                                "nvidia.com/gpu",
                                Quantity.fromString("40"),
                                "memory",
                                Quantity.fromString("8Ki")))));
    assertThat(v.name()).isEqualTo("n1");
    assertThat(v.annotations()).containsKey("hami.io/node-nvidia-register");
    assertThat(v.allocatable().get("nvidia.com/gpu")).isEqualByComparingTo("40");
    assertThat(v.allocatable().get("memory")).isEqualByComparingTo("8192");
  }

  @Test
  void missingIdentityIsATypedArgumentErrorNamingTheField() {
    assertThatThrownBy(() -> KubernetesViews.podView(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("pod");
    assertThatThrownBy(
            () -> KubernetesViews.podView(new V1Pod().metadata(new V1ObjectMeta().name("p"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("namespace");
    assertThatThrownBy(() -> KubernetesViews.nodeView(new V1Node()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("metadata.name");
    assertThatThrownBy(
            () ->
                KubernetesLockOwners.lockOwner(
                    new V1Pod().metadata(new V1ObjectMeta().namespace("a,b").name("p"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a,b");
  }
}
