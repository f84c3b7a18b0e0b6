package dev.hamilock.extender;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link ExtenderServer}'s per-connection header and body read deadlines, enforced by a sweep. */
final class ConnectionClock implements Connection.Listener {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);
  private static final long HEADER = 0;
  private static final long BODY = 1;
  private static final long WORK = 2;
  private final long headerNanos;
  private final long bodyNanos;
  private final ExtenderMetrics metrics;
  private final Map<Connection, long[]> deadlines = new ConcurrentHashMap<>(); // [deadline, phase]

  ConnectionClock(Duration header, Duration body, ExtenderMetrics metrics) {
    this.headerNanos = header.toNanos();
    this.bodyNanos = body.toNanos();
    this.metrics = metrics;
  }

  @Override
  public void onOpened(Connection c) {
    if (!(c instanceof SslConnection)) {
      deadlines.put(c, new long[] {System.nanoTime() + headerNanos, HEADER});
    }
  }

  @Override
  public void onClosed(Connection c) {
    deadlines.remove(c);
  }

  void readingBody(Connection c) {
    set(c, System.nanoTime() + bodyNanos, BODY);
  }

  void working(Connection c) {
    set(c, Long.MAX_VALUE, WORK);
  }

  void exchangeDone(Connection c) {
    set(c, System.nanoTime() + headerNanos, HEADER);
  }

  private void set(Connection c, long deadline, long phase) {
    deadlines.computeIfPresent(c, (k, v) -> new long[] {deadline, phase});
  }

  int open() {
    return deadlines.size();
  }

  void sweep() {
    long now = System.nanoTime();
    for (Map.Entry<Connection, long[]> e : deadlines.entrySet()) {
      long[] d = e.getValue();
      if (d[0] != Long.MAX_VALUE && now - d[0] > 0 && deadlines.remove(e.getKey(), d)) {
        metrics.rejected(d[1] == BODY ? "body_timeout" : "header_timeout");
        LOG.debug(
            "closing a connection that did not send its request {} in time",
            d[1] == BODY ? "body" : "head");
        e.getKey().getEndPoint().close();
      }
    }
  }
}
