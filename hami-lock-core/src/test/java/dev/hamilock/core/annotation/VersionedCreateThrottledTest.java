package dev.hamilock.core.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.annotation.AnnotationLockStorePauseTest.RecordingClock;
import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import dev.hamilock.core.annotation.AnnotationTransport.NodeAnnotations;
import dev.hamilock.core.store.CasResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The create conditioned on a node version ({@link AnnotationLockStore#createIfAbsentAt}) answered
 * 429 (API Priority and Fairness, {@code Retry-After}) or 409: the server applied nothing, so no
 * read can tell more, and the plain create that follows waits the {@code Retry-After} as {@link
 * AnnotationLockStore#createIfAbsent} does. It used to send a GET of the node at once (ignoring
 * {@code Retry-After}) to decide an outcome that was never ambiguous.
 */
class VersionedCreateThrottledTest {

  /** Answers the one PATCH with {@code failure}; records every request. */
  private static final class OneFailure implements AnnotationTransport {
    final List<String> requests = new ArrayList<>();
    final Failure failure;

    OneFailure(Failure failure) {
      this.failure = failure;
    }

    @Override
    public void patch(String node, boolean merge, String body) throws Failure {
      requests.add("PATCH");
      throw failure;
    }

    @Override
    public NodeAnnotations read(String node) {
      requests.add("GET");
      return new NodeAnnotations(Map.of(), "1");
    }
  }

  @Test
  void a429IsNotWrittenWithoutAReadAfterItsRetryAfter() throws Exception {
    OneFailure transport = new OneFailure(new Failure(429, "2", false, false, "HTTP 429", null));
    RecordingClock clock = new RecordingClock();
    AnnotationLockStore store = AnnotationLockStore.builder(transport).waitClock(clock).build();

    CasResult r = store.createIfAbsentAt("n1", "k", "v", "7");

    assertThat(r).isEqualTo(CasResult.notWritten(Optional.empty()));
    assertThat(transport.requests).as("requests").containsExactly("PATCH");
    assertThat(clock.sleeps).as("the Retry-After waited").containsExactly(2_000_000_000L);
  }

  @Test
  void a409IsNotWrittenWithoutARead() throws Exception {
    OneFailure transport = new OneFailure(new Failure(409, null, false, false, "HTTP 409", null));
    RecordingClock clock = new RecordingClock();
    AnnotationLockStore store = AnnotationLockStore.builder(transport).waitClock(clock).build();

    assertThat(store.createIfAbsentAt("n1", "k", "v", "7"))
        .isEqualTo(CasResult.notWritten(Optional.empty()));
    assertThat(transport.requests).as("requests").containsExactly("PATCH");
  }
}
