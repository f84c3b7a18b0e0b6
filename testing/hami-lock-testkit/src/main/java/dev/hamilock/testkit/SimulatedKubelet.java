package dev.hamilock.testkit;

import static dev.hamilock.testkit.Checks.checkArgument;
import static dev.hamilock.testkit.Checks.requireNonBlank;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.selector.FieldSelector;
import dev.hamilock.testkit.selector.LabelSelector;
import dev.hamilock.testkit.selector.SelectorParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet of one node and its device plugin, simulated: every pod bound to the node (binding
 * order, each once) is handed, after the Allocate time, to the plugin's Allocate callback
 * (typically hami-lock's hand-off, which finds the pod through the node lock and releases it). In
 * HAMi's protocol only the plugin releases the lock the scheduler took before the Binding; without
 * one the next gang member on the node waits out the lock retry timeout (28 s).
 *
 * <p>Allocate calls run one at a time on the kubelet's daemon thread (HAMi's plugin-wide mutex); a
 * callback that throws is recorded as a failed {@link Admission}. Pods are observed in-process (no
 * HTTP watch, untouched by {@link ApiServerEmulator#dropWatches()}). Thread-safe.
 *
 * @param <R> what the device plugin's Allocate returns
 */
public final class SimulatedKubelet<R> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SimulatedKubelet.class);

  /** A device plugin's Allocate for one admitted pod. */
  @FunctionalInterface
  public interface DevicePlugin<R> {
    /**
     * @param pod the pod the kubelet is starting
     * @return the Allocate result, recorded in the {@link Admission}
     * @throws Exception a failed Allocate, recorded in the {@link Admission}
     */
    R allocate(String node, BoundPod pod) throws Exception;
  }

  /**
   * A pod bound to the kubelet's node.
   *
   * @param uid its {@code metadata.uid}
   */
  public record BoundPod(String namespace, String name, String uid) {}

  /**
   * One admitted pod and its Allocate outcome.
   *
   * @param result what the plugin returned, or null if it threw
   * @param failure what the plugin threw, or null
   */
  public record Admission<R>(BoundPod pod, R result, Throwable failure) {
    /**
     * @return whether the plugin returned normally
     */
    public boolean succeeded() {
      return failure == null;
    }
  }

  private final ApiServerEmulator k8s;
  private final String node;
  private final Duration allocateTime;
  private final DevicePlugin<R> plugin;
  private final Watcher watcher;
  private final Thread thread;
  private final List<Admission<R>> admissions = new ArrayList<>();
  private volatile boolean closed;

  private SimulatedKubelet(
      ApiServerEmulator k8s, String node, Duration allocateTime, DevicePlugin<R> plugin) {
    this.k8s = k8s;
    this.node = node;
    this.allocateTime = allocateTime;
    this.plugin = plugin;
    FieldSelector onNode;
    try {
      onNode = FieldSelector.parse("spec.nodeName=" + node);
    } catch (SelectorParseException e) {
      throw new IllegalArgumentException(
          "node name is not usable in a field selector: \"" + node + "\"", e);
    }
    this.watcher =
        k8s.store()
            .watchInternal(
                ResourceType.lookup("pods").orElseThrow(), LabelSelector.EVERYTHING, onNode);
    this.thread = new Thread(this::run, "hami-testkit-kubelet-" + node);
    thread.setDaemon(true);
  }

  /**
   * Starts the kubelet of {@code node}; pods already bound to it are admitted first.
   *
   * @param node the node's name (the node object need not exist)
   * @param allocateTime time from admission to the plugin's Allocate call; not negative
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if an argument is blank or negative, or the emulator is closed
   */
  public static <R> SimulatedKubelet<R> start(
      ApiServerEmulator k8s, String node, Duration allocateTime, DevicePlugin<R> plugin) {
    Objects.requireNonNull(k8s, "k8s");
    checkArgument(!k8s.isClosed(), "emulator must be running: %s", k8s);
    requireNonBlank(node, "node");
    Objects.requireNonNull(allocateTime, "allocateTime");
    checkArgument(
        !allocateTime.isNegative(), "allocateTime must not be negative: %s", allocateTime);
    Objects.requireNonNull(plugin, "plugin");
    SimulatedKubelet<R> k = new SimulatedKubelet<>(k8s, node, allocateTime, plugin);
    k.thread.start();
    return k;
  }

  /**
   * @return the node this kubelet serves
   */
  public String node() {
    return node;
  }

  /**
   * @return the admissions so far, in order (a copy)
   */
  public List<Admission<R>> admissions() {
    synchronized (admissions) {
      return List.copyOf(admissions);
    }
  }

  /**
   * Waits until at least {@code count} pods have been through Allocate.
   *
   * @param count how many; 0 returns at once
   * @param timeout how long to wait at most
   * @return the admissions so far, in order
   * @throws TimeoutException if fewer arrived in time, naming the pods admitted so far
   * @throws InterruptedException if interrupted while waiting
   */
  public List<Admission<R>> awaitAdmissions(int count, Duration timeout)
      throws TimeoutException, InterruptedException {
    checkArgument(count >= 0, "count must not be negative: %s", count);
    long deadline = System.nanoTime() + Objects.requireNonNull(timeout, "timeout").toNanos();
    synchronized (admissions) {
      while (admissions.size() < count) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException(
              "kubelet of "
                  + node
                  + ": "
                  + admissions.size()
                  + " of "
                  + count
                  + " pods through Allocate after "
                  + timeout
                  + ": "
                  + admissions.stream()
                      .map(a -> a.pod().namespace() + "/" + a.pod().name())
                      .toList());
        }
        TimeUnit.NANOSECONDS.timedWait(admissions, left);
      }
      return List.copyOf(admissions);
    }
  }

  /** Stops the kubelet (an Allocate in progress is interrupted). Idempotent. */
  @Override
  public void close() {
    closed = true;
    k8s.store().unregisterInternal(watcher);
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    Set<String> admitted = new HashSet<>();
    try {
      while (!closed && !k8s.isClosed()) {
        Watcher.Event e = watcher.poll(TimeUnit.MILLISECONDS.toNanos(50));
        if (e == null || !"ADDED".equals(e.type())) {
          continue; // bound pods are not unbound; MODIFIED/DELETED change nothing for the kubelet
        }
        ObjectNode meta = (ObjectNode) e.object().path("metadata");
        BoundPod pod =
            new BoundPod(
                meta.path("namespace").asText(),
                meta.path("name").asText(),
                meta.path("uid").asText());
        if (!admitted.add(pod.uid())) {
          continue;
        }
        if (!allocateTime.isZero()) {
          TimeUnit.NANOSECONDS.sleep(allocateTime.toNanos());
        }
        Admission<R> a;
        try {
          a = new Admission<>(pod, plugin.allocate(node, pod), null);
        } catch (InterruptedException ie) {
          throw ie;
        } catch (Exception | Error failure) {
          LOG.debug(
              "kubelet of {}: Allocate for {}/{} failed: {}",
              node,
              pod.namespace(),
              pod.name(),
              failure.toString());
          a = new Admission<>(pod, null, failure);
        }
        synchronized (admissions) {
          admissions.add(a);
          admissions.notifyAll();
        }
      }
    } catch (InterruptedException e) {
      // closed
    } finally {
      k8s.store().unregisterInternal(watcher);
    }
  }

  @Override
  public String toString() {
    return "SimulatedKubelet[node="
        + node
        + ", allocateTime="
        + allocateTime
        + ", admitted="
        + admissions().size()
        + "]";
  }
}
