package dev.hamilock.testing.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The capture works against the binding the tests really log through (slf4j-simple). */
class LogCaptureTest {
  private static final Logger LOG = LoggerFactory.getLogger(LogCaptureTest.class);

  @Test
  void capturesTheBindingsOutputAndPrintsOnlyWhatWasNotExpected() {
    PrintStream saved = System.err;
    ByteArrayOutputStream outside = new ByteArrayOutputStream();
    System.setErr(new PrintStream(outside, true, StandardCharsets.UTF_8));
    try {
      try (LogCapture log = LogCapture.start()) {
        LOG.warn("lock {} has expired", "x");
        LOG.warn("something else", new IllegalStateException("boom"));
        assertThat(log.expect("WARN .*LogCaptureTest - lock x has expired")).hasSize(1);
        assertThat(log.entries()).hasSize(2);
        assertThat(log.entries().get(1)).contains("IllegalStateException: boom").contains("\tat ");
        assertThat(outside.toString(StandardCharsets.UTF_8)).isEmpty();
      }
    } finally {
      System.setErr(saved);
    }
    String printed = outside.toString(StandardCharsets.UTF_8);
    assertThat(printed).contains("something else").contains("IllegalStateException: boom");
    assertThat(printed).doesNotContain("has expired");
  }

  @Test
  void restoresTheOriginalStreamOnClose() {
    PrintStream before = System.err;
    try (LogCapture log = LogCapture.start()) {
      assertThat(System.err).isNotSameAs(before);
      assertThat(log.entries()).isEmpty();
    }
    assertThat(System.err).isSameAs(before);
  }
}
