package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link NodeLockListener#all}: every event reaches every listener, in order. */
class NodeLockListenerTest {

  @Test
  void allForwardsEveryEventToEachListenerInOrder() {
    List<String> seen = new ArrayList<>();
    NodeLockListener all =
        NodeLockListener.all(List.of(recording("a", seen), recording("b", seen)));
    LockOwner owner = LockOwner.of("ns", "p");
    all.acquired("n", "k", owner, AcquireOutcome.ACQUIRED);
    all.contended(
        new LockContentionException(
            "held",
            "n",
            "k",
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            null));
    all.released("n", "k", owner);
    all.takenOver("n", "k", owner, "old", AcquireOutcome.TOOK_OVER_EXPIRED);
    all.waited("n", owner, Duration.ZERO, 1, true);
    assertThat(seen)
        .containsExactly(
            "a acquired",
            "b acquired",
            "a contended",
            "b contended",
            "a released",
            "b released",
            "a takenOver",
            "b takenOver",
            "a waited",
            "b waited");
  }

  @Test
  void allOfNoneOrOneIsTheNoopOrThatListener() {
    NodeLockListener one = recording("x", new ArrayList<>());
    assertThat(NodeLockListener.all(List.of())).isSameAs(NodeLockListener.NOOP);
    assertThat(NodeLockListener.all(List.of(one))).isSameAs(one);
    assertThatThrownBy(() -> NodeLockListener.all(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("listeners");
    assertThatThrownBy(() -> NodeLockListener.all(Arrays.asList(one, null)))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("listeners");
  }

  private static NodeLockListener recording(String name, List<String> seen) {
    return new NodeLockListener() {
      @Override
      public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
        seen.add(name + " acquired");
      }

      @Override
      public void contended(LockContentionException contention) {
        seen.add(name + " contended");
      }

      @Override
      public void released(String node, String key, LockOwner owner) {
        seen.add(name + " released");
      }

      @Override
      public void takenOver(
          String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {
        seen.add(name + " takenOver");
      }

      @Override
      public void waited(
          String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
        seen.add(name + " waited");
      }
    };
  }
}
