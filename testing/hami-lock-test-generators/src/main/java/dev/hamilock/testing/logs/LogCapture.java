package dev.hamilock.testing.logs;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Captures what a test logs instead of printing it, so a green build stays quiet and the test can
 * assert the warnings it expects (issue 24 item 4: a real failure must not drown in thousands of
 * expected WARN lines).
 *
 * <pre>{@code
 * try (LogCapture log = LogCapture.start()) {
 *   runThePropertyThatTakesOverExpiredLocks();
 *   assertThat(log.expect("WARN dev\\.hamilock\\.core\\.store\\.StoreNodeLock - .* has expired"))
 *       .isNotEmpty();
 * }
 * }</pre>
 *
 * <p>How: the tests log through slf4j-simple, which writes each entry to {@code System.err} as it
 * stands at the call (not a stream cached at start-up); {@link #start()} replaces {@code
 * System.err} with a buffer and {@link #close()} puts the original back. On close every captured
 * entry (a line plus its stack-trace lines) that matches none of the patterns given to {@link
 * #expect} is printed to the original stream: only what the test declared and asserted is
 * swallowed, everything unexpected stays visible. Entries logged by any thread while the capture is
 * open are captured. Not for tests run in parallel within one JVM (this build runs none). {@code
 * LogCaptureTest} proves the capture against the real binding, so a change of binding fails there
 * rather than silently printing again.
 */
public final class LogCapture implements AutoCloseable {
  /** How slf4j-simple starts an entry: {@code [thread] LEVEL logger - message}. */
  private static final Pattern ENTRY_START =
      Pattern.compile("\\[[^\\]]*\\] (TRACE|DEBUG|INFO|WARN|ERROR) ");

  private final PrintStream original;
  private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
  private final List<Pattern> expected = new ArrayList<>();
  private boolean closed;

  private LogCapture(PrintStream original) {
    this.original = original;
  }

  /**
   * Starts capturing {@code System.err}.
   *
   * @return the open capture; close it (try-with-resources)
   */
  public static LogCapture start() {
    LogCapture capture = new LogCapture(System.err);
    System.setErr(new PrintStream(capture.buffer, true, StandardCharsets.UTF_8));
    return capture;
  }

  /**
   * The entries captured so far, in order; an entry is a log line ({@code [thread] LEVEL logger -
   * message}, slf4j-simple's format) with the lines after it up to the next one (its stack trace).
   *
   * @return the entries, each possibly several lines joined by {@code \n}
   */
  public synchronized List<String> entries() {
    System.err.flush();
    List<String> entries = new ArrayList<>();
    StringBuilder current = null;
    for (String line : buffer.toString(StandardCharsets.UTF_8).split("\\R")) {
      boolean continuation = current != null && !ENTRY_START.matcher(line).lookingAt();
      if (continuation) {
        current.append('\n').append(line);
      } else if (!line.isEmpty()) {
        if (current != null) {
          entries.add(current.toString());
        }
        current = new StringBuilder(line);
      }
    }
    if (current != null) {
      entries.add(current.toString());
    }
    return entries;
  }

  /**
   * Declares entries matching {@code regex} (found anywhere in the entry's first line) as expected:
   * they are not printed on close.
   *
   * @param regex a {@link Pattern} searched in each entry's first line
   * @return the entries captured so far that match it, for the test to assert on
   * @throws java.util.regex.PatternSyntaxException for a bad pattern
   */
  public synchronized List<String> expect(String regex) {
    Pattern p = Pattern.compile(Objects.requireNonNull(regex, "regex"));
    expected.add(p);
    return entries().stream().filter(e -> p.matcher(firstLine(e)).find()).toList();
  }

  /** Restores {@code System.err} and prints every entry no {@link #expect} pattern matched. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<String> all = entries();
    System.setErr(original);
    for (String e : all) {
      String head = firstLine(e);
      if (expected.stream().noneMatch(p -> p.matcher(head).find())) {
        original.println(e);
      }
    }
  }

  private static String firstLine(String entry) {
    int nl = entry.indexOf('\n');
    return nl < 0 ? entry : entry.substring(0, nl);
  }
}
