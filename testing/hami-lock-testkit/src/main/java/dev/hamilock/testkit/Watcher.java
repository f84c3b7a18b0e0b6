package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.selector.FieldSelector;
import dev.hamilock.testkit.selector.LabelSelector;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One open watch: its filter and the queue the store fills (under the store lock, so events arrive
 * in revision order) and the HTTP thread drains.
 */
final class Watcher {
  /** A queued event; {@code object} is an immutable stored node (or a Status for ERROR). */
  record Event(String type, ObjectNode object, long revision) {}

  static final Event CLOSE = new Event("CLOSE", null, -1);

  final ResourceType type;
  final String namespace; // null = all namespaces (or cluster-scoped)
  final LabelSelector labels;
  final FieldSelector fields;
  private final LinkedBlockingQueue<Event> queue = new LinkedBlockingQueue<>();
  private volatile boolean closed;

  Watcher(ResourceType type, String namespace, LabelSelector labels, FieldSelector fields) {
    this.type = type;
    this.namespace = namespace;
    this.labels = labels;
    this.fields = fields;
  }

  boolean matches(ObjectNode obj) {
    if (obj == null) {
      return false;
    }
    if (namespace != null && !namespace.equals(obj.path("metadata").path("namespace").asText())) {
      return false;
    }
    return labels.matches(Store.labels(obj)) && fields.matches(f -> Store.field(obj, f));
  }

  /** Maps a write to this watcher's view (selector transitions become ADDED/DELETED). */
  void offer(String type, ObjectNode prev, ObjectNode next, long revision) {
    if (closed) {
      return;
    }
    switch (type) {
      case "ADDED" -> {
        if (matches(next)) {
          queue.add(new Event("ADDED", next, revision));
        }
      }
      case "DELETED" -> {
        if (matches(prev)) {
          queue.add(new Event("DELETED", next, revision));
        }
      }
      default -> {
        boolean was = matches(prev);
        boolean is = matches(next);
        if (was && is) {
          queue.add(new Event("MODIFIED", next, revision));
        } else if (!was && is) {
          queue.add(new Event("ADDED", next, revision));
        } else if (was) {
          queue.add(new Event("DELETED", next, revision));
        }
      }
    }
  }

  void offerRaw(Event e) {
    queue.add(e);
  }

  Event poll(long nanos) throws InterruptedException {
    return queue.poll(Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }

  void close() {
    closed = true;
    queue.add(CLOSE);
  }

  boolean isClosed() {
    return closed;
  }
}
