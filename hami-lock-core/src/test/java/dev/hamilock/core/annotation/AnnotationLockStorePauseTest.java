package dev.hamilock.core.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.WaitClock;
import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import dev.hamilock.core.annotation.AnnotationTransport.NodeAnnotations;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The pauses between attempts run on the builder's {@link WaitClock}, not on the real clock. */
class AnnotationLockStorePauseTest {

  /** Records each sleep without sleeping; jitter always its smallest value. */
  static final class RecordingClock implements WaitClock {
    final List<Long> sleeps = new ArrayList<>();

    @Override
    public long nanoTime() {
      return 0;
    }

    @Override
    public void sleepNanos(long nanos) {
      sleeps.add(nanos);
    }

    @Override
    public long randomBelow(long bound) {
      return 0;
    }
  }

  /** Answers each PATCH with the next scripted failure, then 2xx; GETs show no lock. */
  static final class ScriptedTransport implements AnnotationTransport {
    final Deque<Failure> failures = new ArrayDeque<>();

    @Override
    public void patch(String node, boolean merge, String body) throws Failure {
      Failure next = failures.poll();
      if (next != null) {
        throw next;
      }
    }

    @Override
    public NodeAnnotations read(String node) {
      return new NodeAnnotations(Map.of(), "1");
    }
  }

  @Test
  void pausesSleepOnTheWaitClockWithBackOffAndRetryAfter() throws Exception {
    ScriptedTransport transport = new ScriptedTransport();
    transport.failures.add(new Failure(409, null, false, false, "HTTP 409", null));
    transport.failures.add(new Failure(409, null, false, false, "HTTP 409", null));
    transport.failures.add(new Failure(429, "2", false, false, "HTTP 429", null));
    RecordingClock clock = new RecordingClock();
    AnnotationLockStore store = AnnotationLockStore.builder(transport).waitClock(clock).build();

    assertThat(store.createIfAbsent("n1", "k", "v").isWritten()).isTrue();

    // back-off 20 ms then 40 ms, each at its -25 % jitter bound; then the 429's Retry-After: 2 s
    assertThat(clock.sleeps).containsExactly(15_000_000L, 30_000_000L, 2_000_000_000L);
  }
}
