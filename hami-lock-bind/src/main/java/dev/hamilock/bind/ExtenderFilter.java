package dev.hamilock.bind;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.HamiAnnotations;
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
 * The scheduler-extender filter step (HAMi {@code Filter}, {@code pkg/scheduler/scheduler.go}, spec
 * §2.2): fits a pod across candidate nodes with their current usage, picks one node and reports a
 * failure reason for each other candidate. It takes <em>no</em> lock — the {@link PodBinder}
 * re-checks the choice under the node lock — and, if configured, writes HAMi's Filter annotations
 * ({@code <vendor>-devices-to-allocate}/{@code -allocated}, {@code hami.io/vgpu-node} + label,
 * {@code hami.io/vgpu-time}) so that HAMi's schedulers and other replicas count the choice at once,
 * as HAMi does.
 *
 * <p>Differences from HAMi: usage is read fresh through the {@link ClusterReader} instead of an
 * informer cache, an undecodable allocation makes its node fail closed (spec §7.19), and ties are
 * deterministic. Thread-safe.
 *
 * <p>Errors: the flow ({@link #filter}, {@link #decide}) returns a {@link FilterDecision} whose
 * {@link FilterDecision#failure()} says why it could not decide ({@link FlowFailure}); the building
 * blocks {@link #readUsage} and {@link #annotate} throw {@link ClusterException} like the ports
 * they call.
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
    this.reader = b.reader;
    this.writer = b.writer;
    this.registry = b.registry;
    this.fitter = b.fitter != null ? b.fitter : PodFitter.create(b.registry);
    this.usage = new UsageReconstructor(b.registry, b.clock);
    this.writeAnnotations = b.writeAnnotations;
    this.clock = b.clock;
  }

  /**
   * @param reader fresh reads
   * @param registry enabled vendors
   * @return a builder: no annotation writes, HAMi's default policies, system clock
   * @throws NullPointerException naming a null argument
   */
  public static Builder builder(ClusterReader reader, VendorRegistry registry) {
    return new Builder(reader, registry);
  }

  /**
   * @return whether {@link #filter} writes HAMi's Filter annotations ({@link
   *     Builder#writeAnnotations}): then its patch, conditioned on the pod's resourceVersion, tells
   *     whether the pod it decided on was current ({@link FilterDecision#annotated()})
   */
  public boolean writesAnnotations() {
    return writeAnnotations;
  }

  /**
   * Filters with fresh usage: reads each candidate node and the pods assigned to it (the pod itself
   * excluded, HAMi step 3), decides, and writes the Filter annotations if configured — unless a
   * fresh read shows the pod already bound or served (bind phase {@code success}): then nothing is
   * written and the decision is returned with {@link FilterDecision#annotated()} false (its Bind
   * will report {@link BindOutcome#ALREADY_BOUND}). Stricter than HAMi, whose Filter always
   * patches.
   *
   * <p>Never throws for cluster or data problems: a failed read or write, or unparsable requests
   * ({@link FlowFailure.Kind#INVALID_REQUEST}), is a {@link FilterDecision#failed} decision.
   *
   * @param candidateNodes node names kube-scheduler passed
   * @return the decision, or a failed one
   * @throws NullPointerException for a null argument
   */
  public FilterDecision filter(PodView pod, List<String> candidateNodes) {
    Objects.requireNonNull(pod, "pod");
    return filter(pod, Optional.empty(), candidateNodes);
  }

  /**
   * As {@link #filter(PodView, List)} for a pod the caller has just read fresh (e.g. the extender's
   * check of which pod it serves): that read stands in for the one before the Filter annotations'
   * patch, one pod GET fewer per filter. The patch still carries the read's resourceVersion, so
   * anything written to the pod since (a bind, a hand-off) fails it with CONFLICT and nothing is
   * written, as with the filter's own read.
   *
   * @param stored the pod as read fresh from the cluster
   * @param candidateNodes node names kube-scheduler passed
   * @return the decision, or a failed one
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
   * Reads the usage of nodes from the cluster (fresh): one node read and one {@link
   * ClusterReader#listPodsAssignedTo} per node, and one {@link ClusterReader#readDra} for all found
   * nodes (DRA allocations count as usage; a device that cannot be mapped to a registered card
   * makes its node USAGE_UNKNOWN).
   *
   * @param nodes node names
   * @param exclude a pod whose own allocation is not counted (re-scheduling), if any
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
      } catch (ClusterException | RuntimeException e) {
        String why = "pod {}: could not record the warning event ({}): {}";
        LOG.debug(why, pod.key(), w.message(), e.toString());
      }
    }
  }

  /**
   * Decides on a given usage snapshot, without any I/O (e.g. a scheduler's own cache).
   *
   * @param snapshot usage of each candidate node
   * @return the decision (not annotated), or a {@link FilterDecision#failed} one ({@link
   *     FlowFailure.Kind#INVALID_REQUEST}, the parser's message) if the pod's requests cannot be
   *     parsed
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
   * Writes HAMi's Filter annotations for a decision (one fresh pod read, then one merge patch, only
   * for the pod's UID).
   *
   * @param decision a decision with a chosen node
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

  /**
   * Why the pod's allocation must not be replaced, read fresh: it is bound or already served (a
   * stale Filter, e.g. after an applied ambiguous binding, HAMi#2645); overwriting would disagree
   * with what the running pod was handed. The patch carries the version read here.
   */
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

    /** Sets the fitter (policies). */
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

    /** Sets the source of {@code hami.io/vgpu-time}. */
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
