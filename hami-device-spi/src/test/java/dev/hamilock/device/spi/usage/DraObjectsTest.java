package dev.hamilock.device.spi.usage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link DraObjects#unconfirmedClaim}: a snapshot confirms a pod's claims only when each is
 * present, allocated and reserved for that pod, as kube-scheduler's PreBind writes it. Each test of
 * a failure keeps the other two conditions true, so dropping any one condition fails a test.
 */
class DraObjectsTest {

  static PodView pod(String name, String uid, String... claims) {
    return PodView.builder("ns", name).uid(uid).resourceClaimNames(Set.of(claims)).build();
  }

  /** A claim in {@code ns}, allocated or not, reserved for the given pod uids. */
  static ResourceClaimView claim(String name, boolean allocated, String... reservedFor) {
    return new ResourceClaimView(
        "ns", name, "uid-" + name, allocated, "n1", List.of(), Set.of(reservedFor));
  }

  static DraObjects snapshot(ResourceClaimView... claims) {
    return new DraObjects(List.of(), List.of(claims));
  }

  @Test
  void podsNamingNoClaimAreConfirmedByAnySnapshot() {
    assertThat(DraObjects.NONE.unconfirmedClaim(List.of())).isEmpty();
    assertThat(DraObjects.NONE.unconfirmedClaim(List.of(pod("p", "u-p")))).isEmpty();
    assertThat(snapshot(claim("c", false)).unconfirmedClaim(List.of(pod("p", "u-p")))).isEmpty();
  }

  @Test
  void claimsAllocatedAndReservedForTheirPodsAreConfirmed() {
    DraObjects s =
        snapshot(
            claim("shared", true, "u-p", "u-q"),
            claim("p-gpu", true, "u-p"),
            claim("unrelated", false));
    assertThat(s.unconfirmedClaim(List.of(pod("p", "u-p", "shared", "p-gpu"), pod("q", "u-q"))))
        .isEmpty();
    assertThat(s.unconfirmedClaim(List.of(pod("q", "u-q", "shared")))).isEmpty();
  }

  @Test
  void aClaimMissingFromTheSnapshotIsUnconfirmed() {
    assertThat(
            snapshot(claim("c", true, "u-p"))
                .unconfirmedClaim(List.of(pod("p", "u-p", "c", "gone"))))
        .hasValueSatisfying(
            why -> assertThat(why).contains("ns/p", "ns/gone", "not in the snapshot"));
  }

  @Test
  void aClaimInAnotherNamespaceDoesNotCount() {
    DraObjects s =
        snapshot(new ResourceClaimView("other", "c", "u", true, "n1", List.of(), Set.of("u-p")));
    assertThat(s.unconfirmedClaim(List.of(pod("p", "u-p", "c"))))
        .hasValueSatisfying(why -> assertThat(why).contains("ns/c", "not in the snapshot"));
  }

  /** Reserved for the pod but not allocated: a state kube-scheduler never writes, still refused. */
  @Test
  void anUnallocatedClaimIsUnconfirmed() {
    assertThat(snapshot(claim("c", false, "u-p")).unconfirmedClaim(List.of(pod("p", "u-p", "c"))))
        .hasValueSatisfying(why -> assertThat(why).contains("ns/p", "ns/c", "not allocated"));
  }

  /** Allocated for another pod (a shared claim before this pod's PreBind): not this pod's yet. */
  @Test
  void aClaimNotReservedForThePodIsUnconfirmed() {
    DraObjects s = snapshot(claim("c", true, "u-q"));
    assertThat(s.unconfirmedClaim(List.of(pod("q", "u-q", "c"), pod("p", "u-p", "c"))))
        .hasValueSatisfying(
            why -> assertThat(why).contains("ns/p", "ns/c", "not reserved for uid u-p"));
    assertThat(snapshot(claim("c", true)).unconfirmedClaim(List.of(pod("p", "u-p", "c"))))
        .as("reserved for nobody")
        .isPresent();
  }

  @Test
  void nullIsRejected() {
    assertThatThrownBy(() -> DraObjects.NONE.unconfirmedClaim(null))
        .isExactlyInstanceOf(NullPointerException.class)
        .hasMessageContaining("pods");
  }

  /**
   * {@link DraObjects#devicesOn}: a slice of the node (or of a pool named after it, without a
   * node), or a claim allocated there; nothing else.
   */
  @Test
  void devicesOnANodeAreItsSlicesAndTheClaimsAllocatedThere() {
    ResourceSliceView n1Slice =
        new ResourceSliceView("s", "gpu.nvidia.com", "n1", 1, "n1", List.of());
    ResourceSliceView sharedPool =
        new ResourceSliceView("s", "gpu.nvidia.com", "p", 1, "", List.of());

    assertThat(new DraObjects(List.of(n1Slice), List.of()).devicesOn("n1")).isTrue();
    assertThat(new DraObjects(List.of(n1Slice), List.of()).devicesOn("n2")).isFalse();
    assertThat(new DraObjects(List.of(sharedPool), List.of()).devicesOn("n1")).isFalse();
    // a pool named after the node without spec.nodeName: DraUsage counts its devices on the node
    ResourceSliceView n1Pool = new ResourceSliceView("s", "gpu.nvidia.com", "n1", 1, "", List.of());
    assertThat(new DraObjects(List.of(n1Pool), List.of()).devicesOn("n1")).isTrue();
    assertThat(new DraObjects(List.of(n1Pool), List.of()).devicesOn("n2")).isFalse();
    assertThat(snapshot(claim("c", true)).devicesOn("n1")).isTrue(); // allocated on n1
    assertThat(snapshot(claim("c", true)).devicesOn("n2")).isFalse();
    assertThat(snapshot(claim("c", false)).devicesOn("n1")).isFalse(); // not allocated
    assertThat(DraObjects.NONE.devicesOn("n1")).isFalse();
    assertThatThrownBy(() -> DraObjects.NONE.devicesOn(null))
        .isExactlyInstanceOf(NullPointerException.class)
        .hasMessageContaining("node");
  }
}
