package dev.hamilock.bind.cluster;

import static dev.hamilock.core.watch.ListAndWatch.field;
import static dev.hamilock.core.watch.ListAndWatch.text;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pods {@link ClusterReader#listPodsAssignedTo} counts, kept from one watch of all pods and
 * applied in the watch's own order, so that the bind's re-fit under the node lock reads them
 * without a LIST once they provably hold every pod write made before the lock was taken (issue 25
 * item 2; {@code testing/realcluster/SCHEDULER.md}, "Where a hand-off's time goes now").
 *
 * <p><b>Invariant.</b> It holds exactly the cluster's pods whose annotation {@code
 * hami.io/vgpu-node} is set, as of pod revision {@link #version()}: a listing replaces them all
 * (the state at the list's version); each event moves them from the state at the version held to
 * the state at the event's (kube-apiserver's watch sends every change of a resource after the
 * version it starts from, in revision order); an event or progress notification at or below the
 * version held is a replay after a re-watch and changes nothing.
 *
 * <p><b>The proof a bind uses.</b> Its allocation PATCH came back at pod version {@code x}. It was
 * written after the bind took the node lock, so after every pod write made before the previous
 * holder released it, and etcd numbers writes in order: those writes are at or below {@code x}.
 * Once {@link #version()} is at least {@code x}, the pods held include them. Versions are compared
 * only within the pod resource, as integers (KEP-5504, apimachinery {@code
 * CompareResourceVersion}); a version that is not one, or a failure to apply an event, makes this
 * unusable until the next listing.
 *
 * <p><b>Feed it from the watch itself, on its one thread</b> ({@link #sink()} on a {@link
 * ListAndWatch}, or {@link #listed}, {@link #changed}, {@link #progressed}): never from an
 * informer's event handlers, which client-java and client-go call through a {@code DeltaFIFO} that
 * hands over a key's pending changes at once, out of the watch's order. Thread-safe.
 */
public final class WatchedPods {
  private static final Logger LOG = LoggerFactory.getLogger(WatchedPods.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Map<String, ClusterPod> byKey = new HashMap<>();
  private long version = -1; // -1: nothing proven (not listed yet, or unusable until a listing)
  private boolean everListed;
  private final AtomicLong answered = new AtomicLong();
  private final AtomicLong fellBack = new AtomicLong();

  /**
   * A listing of all pods at {@code resourceVersion}: replaces everything held.
   *
   * @param pods every pod of the listing (those without {@code hami.io/vgpu-node} are not kept)
   */
  public synchronized void listed(String resourceVersion, Collection<ClusterPod> pods) {
    byKey.clear();
    pods.forEach(this::keep);
    version = KubernetesWire.resourceVersion(resourceVersion);
    everListed = true;
    notifyAll();
  }

  /**
   * One {@code ADDED}, {@code MODIFIED} or {@code DELETED} watch event, at the pod's {@code
   * resourceVersion}; ignored at or below {@link #version()} (a replay).
   */
  public synchronized void changed(ClusterPod pod, boolean deleted) {
    long at = KubernetesWire.resourceVersion(pod.resourceVersion());
    if (at < 0 || version < 0) {
      version = -1;
      return;
    }
    if (at <= version) {
      return;
    }
    byKey.remove(pod.key());
    if (!deleted) {
      keep(pod);
    }
    version = at;
    notifyAll();
  }

  /** A {@code BOOKMARK}: every change up to {@code resourceVersion} has been sent. */
  public synchronized void progressed(String resourceVersion) {
    long at = KubernetesWire.resourceVersion(resourceVersion);
    if (at < 0 || version < 0) {
      version = -1;
    } else if (at > version) {
      version = at;
      notifyAll();
    }
  }

  /** An event could not be applied: nothing is proven until the next {@link #listed}. */
  public synchronized void lost(String why) {
    if (version >= 0) {
      LOG.debug("watched pods unusable until the next listing: {}", why);
    }
    version = -1;
  }

  /** {@return the pod version held, -1 if none is proven} */
  public synchronized long version() {
    return version;
  }

  /**
   * Waits for the first listing (the store may be unusable again later: the binds then list).
   *
   * @return whether a listing was applied within {@code timeout}
   * @throws InterruptedException if interrupted while waiting
   */
  public synchronized boolean awaitListed(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!everListed) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** {@return how many lists {@link #readingFirst} answered from here} */
  public long answered() {
    return answered.get();
  }

  /** {@return how many lists {@link #readingFirst} sent to its reader instead} */
  public long fellBack() {
    return fellBack.get();
  }

  /**
   * The pods {@link ClusterReader#listPodsAssignedTo} would list for {@code node} (annotation
   * {@code hami.io/vgpu-node} equal to it, unbound or bound to it), sorted by {@code
   * namespace/name}, once {@link #version()} reaches {@code podVersion}.
   *
   * @param wait how long to wait for the watch to reach {@code podVersion}
   * @return the pods, empty if the version was not reached in time or is not an integer
   * @throws InterruptedException if interrupted while waiting
   */
  public Optional<List<ClusterPod>> assignedTo(String node, String podVersion, Duration wait)
      throws InterruptedException {
    return assignedTo(node, podVersion, wait, null);
  }

  /** {@link #assignedTo}, giving up early once {@code unless} is set (with this notified). */
  private Optional<List<ClusterPod>> assignedTo(
      String node, String podVersion, Duration wait, AtomicBoolean unless)
      throws InterruptedException {
    long x = KubernetesWire.resourceVersion(podVersion);
    long deadline = System.nanoTime() + wait.toNanos();
    synchronized (this) {
      while (x < 0 || version < x) {
        long left = deadline - System.nanoTime();
        if (x < 0 || left <= 0 || (unless != null && unless.get())) {
          return Optional.empty();
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      List<ClusterPod> out = new ArrayList<>();
      for (ClusterPod p : byKey.values()) {
        if (node.equals(p.view().annotations().get(HamiAnnotations.VGPU_NODE))
            && p.nodeName().map(node::equals).orElse(true)) {
          out.add(p);
        }
      }
      out.sort(Comparator.comparing(ClusterPod::key));
      return Optional.of(out);
    }
  }

  /**
   * A reader answering {@link ClusterReader#listPodsAssignedTo(String, Executor, String)} from here
   * when {@link #assignedTo} proves it, else from {@code reader}; every other read goes to {@code
   * reader}. It waits {@code hedge} for the watch; then, with an executor, it also lists there and
   * takes whichever answer comes first (the watch is the client's own and lags the API server's
   * watch cache when the process is short of CPU); without one it waits up to {@code wait} in all,
   * then lists.
   *
   * @param hedge how long to wait for the watch alone, not negative
   * @param wait how long to wait for the watch in all, at least {@code hedge}
   * @throws IllegalArgumentException if the durations are out of order or negative
   */
  public ForwardingCluster readingFirst(ClusterReader reader, Duration hedge, Duration wait) {
    Objects.requireNonNull(hedge, "hedge");
    Objects.requireNonNull(wait, "wait");
    if (hedge.isNegative() || wait.compareTo(hedge) < 0) {
      throw new IllegalArgumentException(
          "need 0 <= hedge <= wait: hedge " + hedge + ", wait " + wait);
    }
    return new ReadingFirst(Objects.requireNonNull(reader, "reader"), hedge, wait);
  }

  /** {@link #readingFirst}'s reader (named: an anonymous one trips javac's doclint). */
  private final class ReadingFirst extends ForwardingCluster {
    private final Duration hedge;
    private final Duration wait;

    ReadingFirst(ClusterReader reader, Duration hedge, Duration wait) {
      super(reader, null);
      this.hedge = hedge;
      this.wait = wait;
    }

    @Override
    public List<ClusterPod> listPodsAssignedTo(String node, Executor executor, String podVersion)
        throws ClusterException {
      long began = System.nanoTime();
      FutureTask<List<ClusterPod>> listed = null;
      AtomicBoolean answeredByList = new AtomicBoolean();
      AtomicBoolean handed = new AtomicBoolean(); // the executor took the list (not rejected)
      try {
        Optional<List<ClusterPod>> held = assignedTo(node, podVersion, hedge, null);
        if (held.isEmpty() && executor != null) {
          listed =
              ForkedRead.start(
                  r -> {
                    executor.execute(r);
                    handed.set(true);
                  },
                  () -> {
                    try {
                      return ReadingFirst.super.listPodsAssignedTo(node, executor, podVersion);
                    } finally {
                      synchronized (WatchedPods.this) {
                        answeredByList.set(true);
                        WatchedPods.this.notifyAll(); // the waiter below takes the list
                      }
                    }
                  });
        }
        if (held.isEmpty() && (executor == null || handed.get())) {
          held = assignedTo(node, podVersion, wait.minus(hedge), answeredByList);
        }
        if (held.isPresent()) {
          if (listed != null) {
            listed.cancel(false); // not sent if the executor has not started it yet
          }
          answered.incrementAndGet();
          LOG.debug(
              "node {}: pods at version {} from the pod watch after {} µs",
              node,
              podVersion,
              (System.nanoTime() - began) / 1000);
          return held.get();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ClusterException(
            ClusterException.Kind.INTERRUPTED, "waiting for the pod watch", e);
      }
      fellBack.incrementAndGet();
      LOG.debug(
          "node {}: the pod watch had not reached version {} (holds {}); listed",
          node,
          podVersion,
          version());
      return listed != null
          ? ForkedRead.join(listed)
          : super.listPodsAssignedTo(node, executor, podVersion);
    }
  }

  /**
   * A sink that feeds this store from a {@link ListAndWatch} of {@code /api/v1/pods} (any client's
   * {@link ListAndWatch.Transport}; the loop calls it on its one thread, in the watch's order); a
   * store made unusable by a pod the views refuse asks the loop for a listing at most once a
   * minute: {@link #sink(Duration)}.
   *
   * <pre>{@code
   * WatchedPods pods = new WatchedPods();
   * ListAndWatch watch =
   *     ListAndWatch.of("pod watch", "/api/v1/pods", Fabric8WatchTransport.create(client), pods.sink())
   *         .start();
   * ClusterReader reader = pods.readingFirst(Fabric8Cluster.create(client), hedge, wait);
   * }</pre>
   */
  public ListAndWatch.Sink sink() {
    return sink(Duration.ofMinutes(1));
  }

  /**
   * {@link #sink()}, where a pod the views refuse makes the store unusable until the loop's next
   * listing (the binds list meanwhile, as without it), which the sink asks for by refusing an event
   * once {@code relistGap} has passed since the last listing: a pod that stays unreadable costs a
   * LIST of all pods per {@code relistGap}, not one per back-off.
   *
   * @param relistGap at least this long between listings asked for; not negative
   * @throws IllegalArgumentException if {@code relistGap} is negative
   */
  public ListAndWatch.Sink sink(Duration relistGap) {
    if (relistGap.isNegative()) {
      throw new IllegalArgumentException("relistGap must not be negative: " + relistGap);
    }
    return new Sink(relistGap.toNanos());
  }

  /** {@link #sink()} (named: an anonymous one trips javac's doclint). */
  private final class Sink implements ListAndWatch.Sink {
    private final long relistGapNanos;
    private long listedAt = System.nanoTime();

    Sink(long relistGapNanos) {
      this.relistGapNanos = relistGapNanos;
    }

    @Override
    public void listed(String resourceVersion, List<Map<?, ?>> items) {
      listedAt = System.nanoTime();
      List<ClusterPod> pods = new ArrayList<>(items.size());
      try {
        for (Map<?, ?> item : items) {
          pods.add(watchedPod(item));
        }
      } catch (ClusterException | RuntimeException e) {
        synchronized (WatchedPods.this) {
          lost("listing: " + e.getMessage());
          everListed = true; // listed, if unusable: readiness does not wait for the next one
          WatchedPods.this.notifyAll();
        }
        return;
      }
      WatchedPods.this.listed(resourceVersion, pods);
    }

    @Override
    public boolean event(String type, Map<?, ?> object) {
      try {
        switch (type) {
          case "ADDED", "MODIFIED" -> changed(watchedPod(object), false);
          case "DELETED" -> changed(watchedPod(object), true);
          case "BOOKMARK" -> progressed(text(field(object, "metadata"), "resourceVersion"));
          default -> lost("a watch event of unknown type " + type);
        }
      } catch (ClusterException | RuntimeException e) {
        lost("watch event " + type + ": " + e.getMessage());
      }
      // unusable: the loop lists again (after its back-off), at most once per gap
      return version() >= 0 || System.nanoTime() - listedAt < relistGapNanos;
    }
  }

  /**
   * The pod as {@link #changed} takes it: whole if HAMi's Filter annotated it, else only its key
   * and version (none of those is kept, and most pods of a cluster are such: no views built).
   */
  private static ClusterPod watchedPod(Map<?, ?> pod) throws ClusterException {
    Map<?, ?> meta = field(pod, "metadata");
    if (field(meta, "annotations").get(HamiAnnotations.VGPU_NODE) instanceof String) {
      return KubernetesWire.pod("watched pod", JSON.valueToTree(pod));
    }
    String name = text(meta, "name");
    String namespace = text(meta, "namespace");
    if (name == null || namespace == null) {
      throw new ClusterException(
          ClusterException.Kind.REJECTED, "watched pod without namespace or name: " + meta, null);
    }
    return new ClusterPod(
        PodView.builder(namespace, name).build(),
        Optional.empty(),
        Objects.requireNonNullElse(text(meta, "resourceVersion"), ""));
  }

  private void keep(ClusterPod pod) {
    if (pod.view().annotations().containsKey(HamiAnnotations.VGPU_NODE)) {
      byKey.put(pod.key(), pod);
    }
  }
}
