package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Vector V32 (HAMi pkg/util/util_test.go, IsPodGroupMember). */
class GangMembershipTest {

  private static final String LABEL = "scheduling.x-k8s.io/pod-group";

  @Test
  void v32() {
    assertThat(GangMembership.isMember(null, null)).as("nil pod").isFalse();
    assertThat(GangMembership.isMember(Map.of(), Optional.empty())).as("empty pod").isFalse();
    assertThat(GangMembership.isMember(Map.of(LABEL, "my-training-job"), Optional.empty()))
        .isTrue();
    assertThat(GangMembership.isMember(Map.of(LABEL, ""), Optional.empty()))
        .as("empty label")
        .isFalse();
    assertThat(GangMembership.isMember(Map.of(), Optional.of("my-training-job"))).isTrue();
    assertThat(GangMembership.isMember(Map.of(), Optional.empty()))
        .as("nil podGroupName")
        .isFalse();
    assertThat(GangMembership.isMember(Map.of(), Optional.of("")))
        .as("empty podGroupName")
        .isFalse();
    assertThat(GangMembership.isMember(Map.of(LABEL, "a"), Optional.of("b"))).as("both").isTrue();
  }

  @Test
  void otherLabelsDoNotCount() {
    assertThat(
            GangMembership.isMember(
                Map.of("pod-group.scheduling.sigs.k8s.io", "x", "app", "y"), Optional.empty()))
        .isFalse();
    assertThat(GangMembership.POD_GROUP_LABEL).isEqualTo(LABEL);
  }
}
