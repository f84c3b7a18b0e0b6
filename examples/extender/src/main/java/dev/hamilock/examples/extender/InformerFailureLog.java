package dev.hamilock.examples.extender;

import io.kubernetes.client.openapi.ApiException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the informers' list and watch failures print (issue 24 item 5). client-java's default
 * handler ({@code ReflectorRunnable}) logs every failed attempt at ERROR with its whole stack
 * trace, and the informer retries about once a second, so an unreachable API server printed 48
 * stack traces in 25 s. This handler prints one line per resource at most every {@link #EVERY}
 * (WARN: what failed, where, why, how many failures it folded since the last line); a failure to
 * reach the API server (an {@link IOException} cause, or an {@link ApiException} with an HTTP
 * status or none) never carries a stack trace, not even at DEBUG; anything else does.
 */
final class InformerFailureLog {
  /** At most one WARN line per resource per 30 s. */
  static final Duration EVERY = Duration.ofSeconds(30);

  private static final Logger LOG = LoggerFactory.getLogger(InformerFailureLog.class);

  private final String server;
  private final LongSupplier nanoTime;
  private final Map<String, long[]> state = new ConcurrentHashMap<>(); // {next line at, folded}

  /**
   * @param server the API server's URL, named in every line
   * @param nanoTime the clock of the rate limit ({@link System#nanoTime})
   */
  InformerFailureLog(String server, LongSupplier nanoTime) {
    this.server = server;
    this.nanoTime = nanoTime;
  }

  /**
   * @param resource the informer's resource, e.g. {@code nodes}
   * @return the exception handler of that resource's informer
   */
  <T> BiConsumer<Class<T>, Throwable> handler(String resource) {
    return (type, failure) -> failed(resource, failure);
  }

  /** Logs the failure: its stack at DEBUG, and {@link #next}'s line, if any, at WARN. */
  void failed(String resource, Throwable failure) {
    if (stopping(failure)) {
      LOG.debug("list and watch of {} stopped", resource); // close(): nothing failed
      return;
    }
    if (unreachable(failure)) {
      LOG.debug("list and watch of {} failed: {}", resource, failure.toString());
    } else {
      LOG.debug("list and watch of {} failed", resource, failure);
    }
    String line = next(resource, failure);
    if (line == null) {
      return;
    } else if (unreachable(failure)) {
      LOG.warn(line);
    } else {
      LOG.warn(line, failure);
    }
  }

  /**
   * @return the WARN line for this failure, or null when it is folded into the next one
   */
  String next(String resource, Throwable failure) {
    long now = nanoTime.getAsLong();
    long[] s = state.computeIfAbsent(resource, r -> new long[] {now, 0});
    long folded;
    synchronized (s) {
      if (now - s[0] < 0) {
        s[1]++;
        return null;
      }
      s[0] = now + EVERY.toNanos();
      folded = s[1];
      s[1] = 0;
    }
    return "cannot list and watch "
        + resource
        + " at "
        + server
        + ": "
        + describe(failure)
        + (folded > 0 ? " (" + folded + " more failures folded)" : "")
        + "; retrying, next report in "
        + EVERY.toSeconds()
        + "s at the earliest";
  }

  /** An HTTP status, else the innermost cause's message with its simple class name. */
  static String describe(Throwable failure) {
    Throwable root = failure;
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof ApiException a && a.getCode() > 0) {
        return "HTTP " + a.getCode();
      }
      root = c;
    }
    return root.getClass().getSimpleName() + ": " + root.getMessage();
  }

  /** An interruption anywhere in the chain: the informer was stopped, not the server lost. */
  static boolean stopping(Throwable failure) {
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof InterruptedException
          || (c instanceof InterruptedIOException && !(c instanceof SocketTimeoutException))) {
        return true;
      }
    }
    return false;
  }

  /** The API server could not be reached or answered with an HTTP error: no stack says more. */
  static boolean unreachable(Throwable failure) {
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof IOException || c instanceof ApiException) {
        return true;
      }
    }
    return false;
  }
}
