package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLockListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link StoreNodeLock#release(String, LockOwner, String)}: the device plugin's release with the
 * value it read when looking for its pod (spec §3.1, §3.3). Counts {@link LockStore} calls: each is
 * one API request on Kubernetes.
 */
class ObservedValueReleaseTest {

  private static final String KEY = "hami.io/mutex.lock";
  private static final String NODE = "worker-3";
  private static final LockOwner OWNER = LockOwner.of("hami-ns", "hami");
  private static final String OWNER_T0 = "2026-08-01T06:00:00Z,hami-ns,hami";
  private static final String OWNER_T1 = "2026-08-01T06:00:01Z,hami-ns,hami";
  private static final String OTHER_T0 = "2026-08-01T06:00:00Z,other-ns,other-pod";
  private static final String LEGACY = "2026-07-03T15:35:10+08:00";
  private static final String MALFORMED = "lock-values,hami-ns,hami";
  private static final String SUFFIX = "2026-08-01T06:00:00Z,hami-ns,xhami";

  private final CountingStore store = new CountingStore();
  private final List<String> events = new ArrayList<>();

  /** A lock in another process: it has written nothing, so it has no memo of the value. */
  private StoreNodeLock pluginLock() {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .lockTimeout(Duration.ofMinutes(5))
            .clock(new MutableClock("2026-08-01T06:00:02Z"))
            .listener(
                new NodeLockListener() {
                  @Override
                  public void released(String node, String key, LockOwner owner) {
                    events.add("released " + owner.name());
                  }
                })
            .build());
  }

  private void put(String value) {
    store.delegate.createIfAbsent(NODE, KEY, value);
  }

  private Optional<String> stored() {
    return store.delegate.read(NODE, KEY);
  }

  @Test
  void theObservedOwnersValueIsReleasedWithOneStoreCallAndNoRead() throws Exception {
    put(OWNER_T0);
    StoreNodeLock lock = pluginLock();

    assertThat(lock.release(NODE, OWNER, OWNER_T0)).isTrue();

    assertThat(store.calls()).containsExactly("delete");
    assertThat(stored()).isEmpty();
    assertThat(events).containsExactly("released hami");
  }

  @Test
  void withoutTheObservedValueTheSameReleaseCostsARead() throws Exception {
    put(OWNER_T0);

    assertThat(pluginLock().release(NODE, OWNER)).isTrue();

    assertThat(store.calls()).containsExactly("read", "delete");
  }

  @Test
  void readValueReturnsTheStoredTextExactlyWithOneStoreCall() throws Exception {
    put(LEGACY);
    StoreNodeLock lock = pluginLock();

    assertThat(lock.readValue(NODE)).contains(LEGACY);
    assertThat(store.calls()).containsExactly("read");
    store.delegate.deleteIfEquals(NODE, KEY, LEGACY);
    assertThat(lock.readValue(NODE)).isEmpty();
  }

  @Test
  void aValueReStampedAfterTheObservationIsStillReleasedThroughTheFallback() throws Exception {
    put(OWNER_T0);
    StoreNodeLock lock = pluginLock();
    // the owner's binder re-enters and re-stamps between the plugin's read and its delete
    store.beforeNextWrite = () -> store.delegate.replaceIfEquals(NODE, KEY, OWNER_T0, OWNER_T1);

    assertThat(lock.release(NODE, OWNER, OWNER_T0)).isTrue();

    assertThat(store.calls()).containsExactly("delete", "read", "delete");
    assertThat(stored()).isEmpty();
  }

  @Test
  void anotherOwnersValueThatReplacedTheObservedOneIsNeverRemoved() throws Exception {
    put(OWNER_T0);
    StoreNodeLock lock = pluginLock();
    store.beforeNextWrite =
        () -> {
          store.delegate.deleteIfEquals(NODE, KEY, OWNER_T0);
          store.delegate.createIfAbsent(NODE, KEY, OTHER_T0);
        };

    assertThat(lock.release(NODE, OWNER, OWNER_T0)).isFalse();

    assertThat(store.calls()).containsExactly("delete", "read");
    assertThat(stored()).contains(OTHER_T0);
    assertThat(events).isEmpty();
  }

  @Test
  void anObservedValueNamingAnotherOwnerIsNeverDeletedByThisPath() throws Exception {
    put(OTHER_T0);

    assertThat(pluginLock().release(NODE, OWNER, OTHER_T0)).isFalse();

    assertThat(store.calls())
        .as("no compare-and-delete with someone else's value")
        .containsExactly("read");
    assertThat(stored()).contains(OTHER_T0);
  }

  @Test
  void malformedLegacyAndSuffixValuesAreNeverDeletedThisWay() throws Exception {
    for (String value : List.of(MALFORMED, LEGACY, SUFFIX)) {
      store.delegate.deleteIfEquals(NODE, KEY, stored().orElse(""));
      put(value);
      store.calls.clear();

      assertThat(pluginLock().release(NODE, OWNER, value)).as(value).isFalse();

      assertThat(store.calls()).as(value).containsExactly("read");
      assertThat(stored()).as(value).contains(value);
    }
  }

  @Test
  void aNullObservedValueIsRejectedNamingTheArgument() {
    assertThatThrownBy(() -> pluginLock().release(NODE, OWNER, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("observedValue");
    assertThatThrownBy(() -> pluginLock().release(" ", OWNER, OWNER_T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("node");
    assertThatThrownBy(() -> pluginLock().release(NODE, null, OWNER_T0))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("owner");
    assertThat(store.calls()).isEmpty();
  }

  /**
   * Every (observed value, value stored when the delete lands) pair: the release removes the stored
   * value iff it is the owner's, never anything else, and costs one call exactly when the owner's
   * observed value is still there. All 6 x 7 pairs, enumerated.
   */
  @Test
  void releaseRemovesTheOwnersLockAndNothingElseWhateverWasObserved() throws Exception {
    for (int observedIndex = 0; observedIndex <= 5; observedIndex++) {
      for (int storedIndex = 0; storedIndex <= 6; storedIndex++) {
        try {
          releaseRemovesOnlyTheOwnersLock(observedIndex, storedIndex);
        } catch (AssertionError e) {
          throw new AssertionError(
              "observed #" + observedIndex + ", stored #" + storedIndex + ": " + e.getMessage(), e);
        }
      }
    }
  }

  private static void releaseRemovesOnlyTheOwnersLock(int observedIndex, int storedIndex)
      throws Exception {
    List<String> values = List.of(OWNER_T0, OWNER_T1, OTHER_T0, LEGACY, MALFORMED, SUFFIX);
    String observed = values.get(observedIndex);
    Optional<String> atDelete =
        storedIndex == values.size() ? Optional.empty() : Optional.of(values.get(storedIndex));
    CountingStore s = new CountingStore();
    s.delegate.createIfAbsent(NODE, KEY, observed);
    // the stored value changes (or not) between the observation and the release
    s.delegate.deleteIfEquals(NODE, KEY, observed);
    atDelete.ifPresent(v -> s.delegate.createIfAbsent(NODE, KEY, v));
    StoreNodeLock lock =
        StoreNodeLock.create(
            s,
            LockSettings.builder()
                .lockTimeout(Duration.ofMinutes(5))
                .clock(new MutableClock("2026-08-01T06:00:02Z"))
                .build());

    boolean released = lock.release(NODE, OWNER, observed);

    boolean ownersValue =
        atDelete.filter(v -> v.equals(OWNER_T0) || v.equals(OWNER_T1)).isPresent();
    assertThat(released).isEqualTo(ownersValue);
    assertThat(s.delegate.read(NODE, KEY)).isEqualTo(ownersValue ? Optional.empty() : atDelete);
    boolean observedIsOwners = observed.equals(OWNER_T0) || observed.equals(OWNER_T1);
    if (observedIsOwners && atDelete.equals(Optional.of(observed))) {
      assertThat(s.calls()).containsExactly("delete");
    }
    if (!observedIsOwners) {
      assertThat(s.calls())
          .as("no delete with a value not attributed to the owner")
          .first()
          .isEqualTo("read");
    }
  }
}
