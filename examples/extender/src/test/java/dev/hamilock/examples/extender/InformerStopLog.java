package dev.hamilock.examples.extender;

import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.time.Instant;

/**
 * client-java 27 logs the interruption of every informer's processing loop at ERROR with a stack
 * trace whenever its informers are stopped ({@code Controller#processLoop get interrupted}), which
 * each extender these tests start and stop does. Tests capture their logs and call {@link
 * #closeAfterInformersStopped} so that only that known entry is swallowed.
 */
final class InformerStopLog {
  static final String STOPPED =
      "ERROR io\\.kubernetes\\.client\\.informer\\.cache\\.Controller - "
          + "DefaultController#processLoop get interrupted";

  private InformerStopLog() {}

  /**
   * Waits (at most 10 s) until no informer thread runs, declares {@link #STOPPED} expected and
   * closes the capture: every other entry is printed.
   */
  static void closeAfterInformersStopped(LogCapture log) throws InterruptedException {
    awaitInformersStopped();
    log.expect(STOPPED);
    log.close();
  }

  /**
   * Waits (at most 10 s) until no informer thread runs: their stop is logged asynchronously, after
   * the extender's own stop returned.
   */
  static void awaitInformersStopped() throws InterruptedException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
    while (Instant.now().isBefore(deadline)
        && Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> t.getName().startsWith("informer-controller-"))) {
      Thread.sleep(20);
    }
  }
}
