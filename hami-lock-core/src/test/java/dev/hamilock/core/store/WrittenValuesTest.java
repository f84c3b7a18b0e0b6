package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.LockOwner;
import org.junit.jupiter.api.Test;

/** The memo of values this process wrote, and for whom. */
class WrittenValuesTest {

  private static final LockOwner WITH_UID = LockOwner.of("ns", "pod", "uid-1");
  private static final LockOwner PARSED = LockOwner.of("ns", "pod");
  private static final String V1 = "2026-08-01T06:00:00Z,ns,pod";
  private static final String V2 = "2026-08-01T06:00:09Z,ns,pod";

  private final WrittenValues written = new WrittenValues(16);

  @Test
  void theLastValueWrittenForAnOwnerIsHeldPerNode() {
    written.wrote("n1", PARSED, V1);
    written.wrote("n1", PARSED, V2);
    assertThat(written.heldBy("n1", PARSED)).contains(V2);
    assertThat(written.heldBy("n2", PARSED)).isEmpty();
    assertThat(written.heldBy("n1", LockOwner.of("ns", "other"))).isEmpty();
  }

  @Test
  void theUidIsKnownOnlyForTheExactValueWrittenForTheSameName() {
    written.wrote("n1", WITH_UID, V1);
    assertThat(written.withKnownUid("n1", PARSED, V1)).isEqualTo(WITH_UID);
    assertThat(written.withKnownUid("n1", PARSED, V2)).as("another value").isEqualTo(PARSED);
    assertThat(written.withKnownUid("n2", PARSED, V1)).as("another node").isEqualTo(PARSED);
    LockOwner other = LockOwner.of("ns", "other");
    assertThat(written.withKnownUid("n1", other, V1))
        .as("a value naming someone else")
        .isEqualTo(other);
  }

  @Test
  void releaseForgetsTheHeldValueAndItsOwnerButNotANewerValue() {
    written.wrote("n1", WITH_UID, V1);
    written.wrote("n1", WITH_UID, V2);
    written.released("n1", WITH_UID, V1); // an old value: the newer one stays held
    assertThat(written.heldBy("n1", WITH_UID)).contains(V2);
    assertThat(written.withKnownUid("n1", PARSED, V1)).isEqualTo(PARSED);
    written.released("n1", WITH_UID, V2);
    assertThat(written.heldBy("n1", WITH_UID)).isEmpty();
    assertThat(written.withKnownUid("n1", PARSED, V2)).isEqualTo(PARSED);
  }

  @Test
  void holdsNothingForgetsTheHeldValue() {
    written.wrote("n1", PARSED, V1);
    written.holdsNothing("n1", PARSED);
    assertThat(written.heldBy("n1", PARSED)).isEmpty();
  }
}
