package dev.hamilock.examples.gang.real;

import static dev.hamilock.core.watch.ListAndWatch.field;
import static dev.hamilock.core.watch.ListAndWatch.text;

import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.k8s.watch.KubeWatchTransport;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The harness's copy of one namespace's pods, from one list and watch (core's {@link ListAndWatch}
 * over client-java), as kubelet's pod watch sees them: the simulated kubelets and device plugins
 * wake at each change instead of polling, and a run reads its times when the events arrive.
 *
 * <p>It replaced a LIST of each node's pods every 10 ms per simulated device plugin and a LIST of
 * the namespace every 20 ms for the run's times: about 150 LISTs a second on the API server of a
 * 2-core machine, in every mode, slowing the requests of every hand-off (kubelet watches its pods;
 * it does not poll). Thread-safe.
 */
final class PodWatch implements AutoCloseable {
  private final Map<String, Map<?, ?>> byName = new HashMap<>();
  private final ListAndWatch loop;
  private long changes;
  private boolean listed;

  PodWatch(ApiClient client, String namespace) {
    loop =
        ListAndWatch.of(
            "harness pod watch",
            "/api/v1/namespaces/" + namespace + "/pods",
            KubeWatchTransport.create(client, Duration.ofSeconds(10)),
            new Sink());
  }

  /**
   * Starts the watch and waits for its first listing.
   *
   * @throws IllegalStateException if it has not listed within {@code timeout}, or is interrupted
   */
  PodWatch start(Duration timeout) {
    loop.start();
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (this) {
      while (!listed) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          loop.close();
          throw new IllegalStateException("harness pod watch: not listed within " + timeout);
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          loop.close();
          throw new IllegalStateException("interrupted", e);
        }
      }
    }
    return this;
  }

  /**
   * Waits until the pods changed after {@code seen} (a value this returned; -1 for none), at most
   * {@code timeoutMs}.
   *
   * @return the change count now, to pass as {@code seen} next time
   */
  synchronized long awaitChange(long seen, long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (changes == seen) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return changes;
  }

  /** {@return the pods held now whose {@code spec.nodeName} is {@code node}} */
  synchronized List<Map<?, ?>> boundTo(String node) {
    return byName.values().stream().filter(p -> node.equals(nodeName(p))).toList();
  }

  /** {@return the pod held now} */
  synchronized Optional<Map<?, ?>> pod(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  static String name(Map<?, ?> pod) {
    return text(field(pod, "metadata"), "name");
  }

  /** {@return {@code spec.nodeName}, empty if unbound} */
  static String nodeName(Map<?, ?> pod) {
    return Optional.ofNullable(text(field(pod, "spec"), "nodeName")).orElse("");
  }

  static String phase(Map<?, ?> pod) {
    return Optional.ofNullable(text(field(pod, "status"), "phase")).orElse("");
  }

  static boolean deleting(Map<?, ?> pod) {
    return field(pod, "metadata").get("deletionTimestamp") != null;
  }

  static String annotation(Map<?, ?> pod, String key) {
    return text(field(field(pod, "metadata"), "annotations"), key);
  }

  @Override
  public void close() {
    loop.close();
  }

  /** The watch's sink (named: an anonymous one trips javac's doclint). */
  private final class Sink implements ListAndWatch.Sink {
    @Override
    public void listed(String resourceVersion, List<Map<?, ?>> items) {
      synchronized (PodWatch.this) {
        byName.clear();
        items.forEach(p -> byName.put(name(p), p));
        listed = true;
        changed();
      }
    }

    @Override
    public boolean event(String type, Map<?, ?> object) {
      synchronized (PodWatch.this) {
        switch (type) {
          case "ADDED", "MODIFIED" -> byName.put(name(object), object);
          case "DELETED" -> byName.remove(name(object));
          default -> {
            return true; // BOOKMARK
          }
        }
        changed();
      }
      return true;
    }

    private void changed() {
      changes++;
      PodWatch.this.notifyAll();
    }
  }
}
