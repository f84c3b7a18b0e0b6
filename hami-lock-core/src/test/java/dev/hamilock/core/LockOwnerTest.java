package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class LockOwnerTest {

  @Test
  void badFieldsAreRejectedNamingTheArgument() {
    assertThatThrownBy(() -> LockOwner.of(null, "p"))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("namespace");
    assertThatThrownBy(() -> LockOwner.of(" ", "p"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("namespace");
    assertThatThrownBy(() -> LockOwner.of("ns", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name");
    assertThatThrownBy(() -> LockOwner.of("ns", "a,b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name")
        .hasMessageContaining("a,b");
    assertThatThrownBy(() -> LockOwner.of("ns", "p", " "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("uid");
    assertThatThrownBy(() -> new LockOwner("ns", "p", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("uid");
  }

  @Test
  void sameOwnerIsExactNamespaceAndNameNeverSuffix() {
    LockOwner a = LockOwner.of("ns", "pod-a");
    assertThat(a.isSameOwner(LockOwner.of("ns", "pod-a"))).isTrue();
    assertThat(a.isSameOwner(LockOwner.of("ns", "xpod-a"))).isFalse();
    assertThat(a.isSameOwner(LockOwner.of("xns", "pod-a"))).isFalse();
    assertThat(LockOwner.of("a-ns", "pod").isSameOwner(LockOwner.of("ns", "pod"))).isFalse();
    assertThat(a.isSameOwner(LockOwner.of("NS", "pod-a"))).isFalse();
    assertThat(a.isSameOwner(null)).isFalse();
  }

  @Test
  void uidIsComparedOnlyWhenBothSidesKnowIt() {
    LockOwner u1 = LockOwner.of("ns", "p", "uid-1");
    assertThat(u1.isSameOwner(LockOwner.of("ns", "p", "uid-1"))).isTrue();
    assertThat(u1.isSameOwner(LockOwner.of("ns", "p", "uid-2"))).isFalse();
    assertThat(u1.isSameOwner(LockOwner.of("ns", "p"))).isTrue();
    assertThat(LockOwner.of("ns", "p").isSameOwner(u1)).isTrue();
    assertThat(u1.uid()).isEqualTo(Optional.of("uid-1"));
  }
}
