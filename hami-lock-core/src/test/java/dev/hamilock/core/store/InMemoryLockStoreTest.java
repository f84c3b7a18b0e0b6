package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The reference store's compare-and-set answers: exact witnesses, "written" its own case. */
class InMemoryLockStoreTest {

  private final InMemoryLockStore store = new InMemoryLockStore();

  @Test
  void createAnswersWrittenOrTheValuePresent() {
    assertThat(store.createIfAbsent("n1", "k", "v1")).isEqualTo(CasResult.written());
    assertThat(store.createIfAbsent("n1", "k", "v1"))
        .as("even an equal value")
        .isEqualTo(CasResult.found("v1"));
    assertThat(store.createIfAbsent("n1", "k", "v2")).isEqualTo(CasResult.found("v1"));
    assertThat(store.createIfAbsent("n2", "k", "v2"))
        .as("another node")
        .isEqualTo(CasResult.written());
    assertThat(store.createIfAbsent("n1", "other", "v2"))
        .as("another key")
        .isEqualTo(CasResult.written());
  }

  @Test
  void replaceAnswersWrittenOrTheValuePresentOrNone() {
    assertThat(store.replaceIfEquals("n1", "k", "v1", "v2"))
        .isEqualTo(CasResult.notWritten(Optional.empty()));
    store.createIfAbsent("n1", "k", "v1");
    assertThat(store.replaceIfEquals("n1", "k", "x", "v2")).isEqualTo(CasResult.found("v1"));
    assertThat(store.read("n1", "k")).contains("v1");
    assertThat(store.replaceIfEquals("n1", "k", "v1", "v2")).isEqualTo(CasResult.written());
    assertThat(store.read("n1", "k")).contains("v2");
    assertThat(store.deleteIfEquals("n1", "k", "v1")).isFalse();
    assertThat(store.deleteIfEquals("n1", "k", "v2")).isTrue();
    assertThat(store.replaceIfEquals("n1", "k", "v2", "v3"))
        .isEqualTo(CasResult.notWritten(Optional.empty()));
  }

  @Test
  void concurrentCreatesHaveOneWinnerAndEveryLoserSeesTheWinnersValue() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Callable<CasResult>> tasks = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        String v = "w" + i;
        tasks.add(() -> store.createIfAbsent("n1", "k", v));
      }
      List<CasResult> results = new ArrayList<>();
      for (Future<CasResult> f : pool.invokeAll(tasks)) {
        results.add(f.get());
      }
      String winner = store.read("n1", "k").orElseThrow();
      assertThat(results).filteredOn(CasResult::isWritten).hasSize(1);
      assertThat(results)
          .filteredOn(r -> !r.isWritten())
          .hasSize(7)
          .allSatisfy(r -> assertThat(r).isEqualTo(CasResult.found(winner)));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aWitnessIsNeverNull() {
    assertThatThrownBy(() -> CasResult.notWritten(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> CasResult.found(null)).isInstanceOf(NullPointerException.class);
    assertThat(CasResult.written().isWritten()).isTrue();
    assertThat(CasResult.found("v").isWritten()).isFalse();
  }
}
