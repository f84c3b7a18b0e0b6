package dev.hamilock.bind;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorException;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Clock;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler-extender Filter (HAMi {@code pkg/scheduler/scheduler.go} Filter, spec §2.2): fits a
 * pod across candidate nodes with their current usage, picks one and gives each other a failure
 * reason. No lock (the {@link PodBinder} re-checks under it); if configured it writes HAMi's Filter
 * annotations ({@link AllocationAnnotations#filterPatch}) so that other schedulers count the choice
 * at once, as HAMi does. Unlike HAMi: usage read fresh, an undecodable allocation fails its node
 * closed (spec §7.19), deterministic ties. {@link #filter} and {@link #decide} report failures in
 * the {@link FilterDecision}; {@link #readUsage} and {@link #annotate} throw {@link
 * ClusterException}. Thread-safe.
 */
public final class ExtenderFilter {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderFilter.class);

  private final ClusterReader reader;
  private final ClusterWriter writer;
  private final VendorRegistry registry;
  private final PodFitter fitter;
  private final UsageReconstructor usage;
  private final boolean writeAnnotations;
  private final InstantSource clock;

  private ExtenderFilter(Builder b) {
    this.reader = StackPorts.checked(b.reader, null);
    this.writer = b.writer == null ? null : StackPorts.checked(null, b.writer);
    this.registry = b.registry;
    this.fitter = b.fitter != null ? b.fitter : PodFitter.create(b.registry);
    this.usage = new UsageReconstructor(b.registry, b.clock);
    this.writeAnnotations = b.writeAnnotations;
    this.clock = b.clock;
  }

  /**
   * @return a builder: no annotation writes, HAMi's default policies, system clock
   * @throws NullPointerException naming a null argument
   */
  public static Builder builder(ClusterReader reader, VendorRegistry registry) {
    return new Builder(reader, registry);
  }

  /** {@return whether {@link #filter} writes HAMi's Filter annotations} */
  public boolean writesAnnotations() {
    return writeAnnotations;
  }

  /**
   * Filters with fresh usage ({@link #readUsage}, the pod itself excluded, HAMi step 3) and writes
   * the Filter annotations if configured, unless a fresh read shows the pod bound or served: then
   * the decision is not {@link FilterDecision#annotated()} (HAMi's Filter always patches). A failed
   * read or write, or unparsable requests, is a {@link FilterDecision#failed} decision.
   *
   * @throws NullPointerException for a null argument
   */
  public FilterDecision filter(PodView pod, List<String> candidateNodes) {
    Objects.requireNonNull(pod, "pod");
    return filter(pod, Optional.empty(), candidateNodes);
  }

  /**
   * As {@link #filter(PodView, List)} for a pod just read fresh, one pod GET fewer: the patch
   * carries that read's resourceVersion, so anything written since fails it with CONFLICT.
   *
   * @throws NullPointerException for a null argument
   */
  public FilterDecision filter(ClusterPod stored, List<String> candidateNodes) {
    return filter(stored.view(), Optional.of(stored), candidateNodes);
  }

  private FilterDecision filter(
      PodView pod, Optional<ClusterPod> stored, List<String> candidateNodes) {
    Objects.requireNonNull(candidateNodes, "candidateNodes");
    try {
      return filterOrThrow(pod, stored, candidateNodes);
    } catch (InvalidPodRequestException e) {
      return invalid(e);
    } catch (ClusterException e) {
      return FilterDecision.failed(FlowFailure.of(e.getMessage(), e, FlowFailure.Kind.UNAVAILABLE));
    } catch (VendorException e) { // its allocation cannot be written: no node chosen
      return FilterDecision.failed(
          FlowFailure.of(e.getMessage(), e, FlowFailure.Kind.INVALID_DATA));
    }
  }

  private FilterDecision filterOrThrow(
      PodView pod, Optional<ClusterPod> stored, List<String> candidateNodes)
      throws InvalidPodRequestException, ClusterException {
    Map<String, NodeUsage> current = readUsage(candidateNodes, Optional.of(pod));
    Map<String, String> missing = new LinkedHashMap<>();
    for (String n : candidateNodes) {
      if (!current.containsKey(n)) {
        missing.put(n, "node not found");
      }
    }
    FilterDecision d = decide(pod, current.values(), missing);
    recordWarnings(pod, d);
    if (writeAnnotations && d.node().isPresent()) {
      try {
        annotate(stored.isPresent() ? stored.get() : readFresh(pod), pod, d);
      } catch (ClusterException e) {
        if (e.kind() != ClusterException.Kind.CONFLICT) {
          throw e;
        }
        LOG.debug("not writing the Filter annotations: {}", e.getMessage());
        return d;
      }
      return d.withAnnotated();
    }
    return d;
  }

  /**
   * Reads the nodes' usage: per node a read and {@link ClusterReader#listPodsAssignedTo}, then one
   * {@link ClusterReader#readDraForFilter} for all found.
   *
   * @param exclude a pod whose own allocation is not counted, if any
   * @return node name to usage, in the given order; missing nodes are left out
   * @throws ClusterException if a read failed
   */
  public Map<String, NodeUsage> readUsage(Collection<String> nodes, Optional<PodView> exclude)
      throws ClusterException {
    Map<NodeView, List<PodView>> found = new LinkedHashMap<>();
    for (String n : nodes) {
      Optional<NodeView> node = reader.readNode(n);
      if (node.isEmpty()) {
        continue;
      }
      found.put(
          node.get(),
          reader.listPodsAssignedTo(n).stream()
              .map(ClusterPod::view)
              .filter(v -> exclude.isEmpty() || !v.key().equals(exclude.get().key()))
              .toList());
    }
    DraObjects dra =
        found.isEmpty()
            ? DraObjects.NONE
            : reader.readDraForFilter(found.keySet().stream().map(NodeView::name).toList());
    Map<String, NodeUsage> out = new LinkedHashMap<>();
    found.forEach((node, pods) -> out.put(node.name(), usage.nodeUsage(node, pods, dra)));
    return out;
  }

  /** Each ignored annotation as a Warning Event on the pod, best effort (failures at DEBUG). */
  private void recordWarnings(PodView pod, FilterDecision d) {
    if (!writeAnnotations) {
      return;
    }
    for (AnnotationWarning w : d.warnings()) {
      try {
        writer.recordPodEvent(
            pod.namespace(), pod.name(), pod.uid(), "Warning", "IgnoredAnnotation", w.message());
      } catch (ClusterException e) {
        String why = "pod {}: could not record the warning event ({}): {}";
        LOG.debug(why, pod.key(), w.message(), e.toString());
      }
    }
  }

  /**
   * Decides on a given usage snapshot, without I/O.
   *
   * @return the decision, or a {@link FilterDecision#failed} one ({@link
   *     FlowFailure.Kind#INVALID_REQUEST}) if the pod's requests cannot be parsed
   */
  public FilterDecision decide(PodView pod, Collection<NodeUsage> snapshot) {
    try {
      return decide(pod, snapshot, Map.of());
    } catch (InvalidPodRequestException e) {
      return invalid(e);
    }
  }

  private static FilterDecision invalid(InvalidPodRequestException e) {
    return FilterDecision.failed(
        FlowFailure.of(e.getMessage(), e, FlowFailure.Kind.INVALID_REQUEST));
  }

  private FilterDecision decide(
      PodView pod, Collection<NodeUsage> snapshot, Map<String, String> extraFailures)
      throws InvalidPodRequestException {
    FilterResult r = fitter.filter(pod, snapshot);
    boolean asked = r.devicesRequested();
    Map<String, String> failed = new LinkedHashMap<>(asked ? r.failedNodes() : Map.of());
    List<String> passed = new ArrayList<>(r.passed());
    if (asked) {
      failed.putAll(extraFailures);
    } else {
      passed.addAll(extraFailures.keySet());
    }
    Optional<NodeFit> best = asked ? r.best() : Optional.empty();
    return new FilterDecision(
        asked,
        best.map(NodeFit::nodeName),
        best.map(NodeFit::devices),
        best.map(NodeFit::score).orElse(0.0),
        passed,
        failed,
        false,
        r.warnings(),
        Optional.empty());
  }

  /**
   * Writes HAMi's Filter annotations for a decision (one fresh pod read, then one merge patch).
   *
   * @return the pod as stored
   * @throws ClusterException if the read or write failed; CONFLICT (nothing written) if the pod is
   *     already bound or served, or changed between the read and the patch (which carries the
   *     read's resourceVersion); NOT_FOUND if the pod (that UID) no longer exists
   * @throws IllegalArgumentException if the decision chose no node
   */
  public ClusterPod annotate(PodView pod, FilterDecision decision) throws ClusterException {
    decision.node().orElseThrow(() -> new IllegalArgumentException("decision chose no node"));
    return annotate(readFresh(pod), pod, decision);
  }

  private ClusterPod annotate(ClusterPod fresh, PodView pod, FilterDecision decision)
      throws ClusterException {
    String node = decision.node().orElseThrow();
    Optional<String> already = alreadyAllocated(fresh, pod);
    if (already.isPresent()) {
      throw new ClusterException(ClusterException.Kind.CONFLICT, already.get(), null);
    }
    if (writer == null) {
      throw new ClusterException(
          ClusterException.Kind.REJECTED, "this ExtenderFilter has no writer", null);
    }
    PodDevices devices = decision.devices().orElse(PodDevices.empty());
    return writer.patchPodMetadata(
        pod.namespace(),
        pod.name(),
        AllocationAnnotations.filterPatch(registry, pod, node, devices, clock.instant())
            .expectedResourceVersion(fresh.resourceVersion())
            .build());
  }

  private ClusterPod readFresh(PodView pod) throws ClusterException {
    Optional<ClusterPod> current = reader.readPod(pod.namespace(), pod.name());
    if (current.isEmpty()
        || (!pod.uid().isBlank() && !pod.uid().equals(current.get().view().uid()))) {
      String uid = pod.uid().isBlank() ? "" : " (uid " + pod.uid() + ")";
      String why = "pod " + pod.key() + uid + " not found";
      throw new ClusterException(ClusterException.Kind.NOT_FOUND, why, null);
    }
    return current.get();
  }

  /** Why a bound or served pod's allocation is not replaced (a stale Filter, HAMi#2645). */
  private static Optional<String> alreadyAllocated(ClusterPod c, PodView pod) {
    String why =
        c.isBound()
            ? "is already bound to node " + c.nodeName().get()
            : AllocationAnnotations.PHASE_SUCCESS.equals(
                    c.view().annotations().get(HamiAnnotations.BIND_PHASE))
                ? "was already served (bind phase success)"
                : null;
    return Optional.ofNullable(why)
        .map(
            w -> "pod " + pod.key() + " " + w + "; its allocation annotations are not overwritten");
  }

  /** Builder for {@link ExtenderFilter}. Not thread-safe. */
  public static final class Builder {
    private final ClusterReader reader;
    private final VendorRegistry registry;
    private ClusterWriter writer;
    private PodFitter fitter;
    private boolean writeAnnotations;
    private InstantSource clock = Clock.systemUTC();

    private Builder(ClusterReader reader, VendorRegistry registry) {
      this.reader = Objects.requireNonNull(reader, "reader");
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    public Builder fitter(PodFitter fitter) {
      this.fitter = Objects.requireNonNull(fitter, "fitter");
      return this;
    }

    /** Makes {@link ExtenderFilter#filter} write HAMi's Filter annotations (default off). */
    public Builder writeAnnotations(ClusterWriter writer) {
      this.writer = Objects.requireNonNull(writer, "writer");
      this.writeAnnotations = true;
      return this;
    }

    /** Sets the writer {@link ExtenderFilter#annotate} uses without enabling automatic writes. */
    public Builder writer(ClusterWriter writer) {
      this.writer = Objects.requireNonNull(writer, "writer");
      return this;
    }

    /** The source of {@code hami.io/vgpu-time}. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** {@return the filter} */
    public ExtenderFilter build() {
      return new ExtenderFilter(this);
    }
  }
}
