package dev.hamilock.extender;

import static dev.hamilock.core.internal.Checks.checkArgument;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.ExtenderFilter;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.FlowFailure;
import dev.hamilock.bind.GpuPreemption;
import dev.hamilock.bind.HamiFlows;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderBindingResult;
import dev.hamilock.extender.v1.ExtenderFilterResult;
import dev.hamilock.extender.v1.ExtenderJsonException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * HAMi's scheduler-extender verbs ({@code pkg/scheduler/routes/route.go}, spec §2.1-2.3): {@link
 * #filter} over {@link ExtenderFilter}, {@link #bind} over {@link PodBinder}. As in HAMi, problems
 * go in the result's {@code Error} field, never thrown; contention ends in {@code node lock
 * contention}. Thread-safe.
 */
public final class HamiExtender {
  private static final Logger LOG = LoggerFactory.getLogger(HamiExtender.class);

  /** HAMi's error when the filter arguments carry no pod. */
  public static final String MISSING_POD = "extender args missing pod";

  /** Error when the filter arguments carry neither {@code NodeNames} nor {@code Nodes}. */
  public static final String MISSING_NODES = "extender args missing NodeNames and Nodes";

  /** What the API server defaults an empty {@code spec.schedulerName} to. */
  public static final String DEFAULT_SCHEDULER = "default-scheduler";

  private final ClusterReader reader;
  private final ExtenderFilter filter;
  private final PodBinder binder;
  private final VendorRegistry registry;
  private final UsageReconstructor usage;
  private final int maxFilterNodes;
  final ServedPods served;
  private volatile PodEvents events; // null: no bind-failure Events
  private volatile GpuPreemption preemption; // null: no preemption by the extender (the default)

  private HamiExtender(
      ExtenderFilter filter,
      PodBinder binder,
      ClusterReader reader,
      VendorRegistry registry,
      int maxFilterNodes,
      ServedPods served) {
    this.reader = InterruptibleReader.wrap(reader);
    this.filter = filter;
    this.binder = binder;
    this.registry = registry;
    this.usage = new UsageReconstructor(registry);
    this.maxFilterNodes = maxFilterNodes;
    this.served = served;
  }

  /**
   * A copy that accepts at most {@code max} distinct {@code NodeNames} (or {@code Nodes.items}) per
   * filter request.
   *
   * @throws IllegalArgumentException if {@code max} &lt; 1
   */
  public HamiExtender withMaxFilterNodes(int max) {
    checkArgument(max >= 1, "maxFilterNodes must be at least 1: %s", max);
    return copy(max, served);
  }

  private HamiExtender copy(int max, ServedPods pods) {
    HamiExtender copy = new HamiExtender(filter, binder, reader, registry, max, pods);
    copy.events = events;
    copy.preemption = preemption;
    return copy;
  }

  /**
   * A copy that serves only pods of the given schedulers ({@code lookup}) asking for a managed
   * device; others are refused ({@link RequestRejectedException}) before anything is written.
   *
   * @throws NullPointerException on a null name list or lookup
   * @throws IllegalArgumentException on an empty name list or a null or blank name, naming the list
   */
  public HamiExtender servingSchedulers(List<String> names, PodSchedulerNames lookup) {
    Objects.requireNonNull(names, "names");
    Objects.requireNonNull(lookup, "lookup");
    checkArgument(
        !names.isEmpty() && names.stream().allMatch(n -> n != null && !n.isBlank()),
        "scheduler names must be a non-empty list without blanks: %s",
        names);
    return copy(maxFilterNodes, new ServedPods(reader, registry, Set.copyOf(names), lookup));
  }

  /** Records a {@code BindFailed} Warning Event per failed bind. Set once while wiring. */
  public HamiExtender recordingEvents(PodEvents events) {
    this.events = Objects.requireNonNull(events, "events");
    return this;
  }

  /**
   * Submits a served pod that fails the Filter on every node and may preempt ({@code
   * preemptionPolicy} not {@code Never}, of the stored pod) to {@code preemption} (default: none).
   * Set once while wiring.
   */
  public HamiExtender preempting(GpuPreemption preemption) {
    this.preemption = Objects.requireNonNull(preemption, "preemption");
    return this;
  }

  /** Tells {@link #preemption} the filtered nodes; submits a pod that failed everywhere. */
  private ExtenderFilterResult preempting(PodView pod, ExtenderFilterResult r) {
    GpuPreemption p = preemption;
    if (p == null) {
      return r;
    }
    p.filtered(pod, r.coveredNodes());
    if (r.failedNodes().isPresent()
        && r.nodeNames().isEmpty()
        && r.nodes().isEmpty()
        && !"Never".equals(pod.preemptionPolicy())) {
      p.submit(pod, r.failedNodes().get().keySet());
    }
    return r;
  }

  /**
   * An extender serving the given flows; give filter and binder a {@link PodFitter} with the same
   * policies and build the filter with {@link ExtenderFilter.Builder#writeAnnotations}.
   *
   * @throws NullPointerException naming a null argument
   */
  public static HamiExtender create(
      ExtenderFilter filter, PodBinder binder, ClusterReader reader, VendorRegistry registry) {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(binder, "binder");
    Objects.requireNonNull(reader, "reader");
    Objects.requireNonNull(registry, "registry");
    ServedPods any = new ServedPods(InterruptibleReader.wrap(reader), registry, Set.of(), null);
    return new HamiExtender(
        filter, binder, reader, registry, ServingConfig.DEFAULT_MAX_FILTER_NODES, any);
  }

  /**
   * The stack's Filter, bind flow and reader, capped at {@code config.serving().maxFilterNodes()}.
   *
   * @throws NullPointerException naming a null argument
   */
  public static HamiExtender create(HamiFlows flows, ExtenderConfig config) {
    Objects.requireNonNull(flows, "flows");
    Objects.requireNonNull(config, "config");
    return create(flows.extenderFilter(), flows.podBinder(), flows.filterReader(), flows.registry())
        .withMaxFilterNodes(config.serving().maxFilterNodes());
  }

  /**
   * The filter verb (HAMi {@code Filter}, spec §2.2): with {@code NodeNames}, fits on fresh reads,
   * writes HAMi's Filter annotations and answers {@code NodeNames=[chosen]} and the {@code
   * FailedNodes} (null when none); with only {@code Nodes}, fits on them, writes nothing and
   * answers the chosen node's object. A pod asking for no device passes every candidate.
   *
   * @return the result; problems in {@code Error}; never throws for bad input or cluster errors
   */
  public ExtenderFilterResult filter(ExtenderArgs args) {
    try {
      return filterChecked(args);
    } catch (RequestRejectedException e) {
      return ExtenderFilterResult.ofError(e.getMessage());
    }
  }

  /**
   * As {@link #filter}, but throws for more distinct nodes than the cap, a pod not stored (or of
   * another UID) or of a scheduler not served; fit and writes use the stored pod.
   *
   * @throws RequestRejectedException naming the count and the cap, or the scheduler name
   */
  public ExtenderFilterResult filterChecked(ExtenderArgs args) throws RequestRejectedException {
    Objects.requireNonNull(args, "args");
    if (args.pod().isEmpty()) {
      return ExtenderFilterResult.ofError(MISSING_POD);
    }
    PodView pod;
    try {
      pod = JsonViews.podView(args.pod().get());
    } catch (MalformedObjectException e) {
      return ExtenderFilterResult.ofError("invalid pod in extender args: " + e.getMessage());
    }
    try {
      if (args.nodeNames().isPresent()) {
        List<String> names = args.nodeNames().get();
        Set<String> distinct = new LinkedHashSet<>();
        for (int i = 0; i < names.size(); i++) {
          if (names.get(i).isBlank()) {
            return ExtenderFilterResult.ofError("extender args NodeNames[" + i + "] is blank");
          }
          if (distinct.add(names.get(i)) && distinct.size() > maxFilterNodes) {
            throw ServingConfig.tooManyNodes(maxFilterNodes, names.size());
          }
        }
        List<String> candidates = List.copyOf(distinct);
        // a cached copy only where the Filter's conditioned patch can tell it was stale
        Optional<ClusterPod> cached =
            filter.writesAnnotations() ? served.cached(pod) : Optional.empty();
        ClusterPod s = cached.isPresent() ? cached.get() : served.stored(pod);
        FilterDecision d = filter.filter(s, candidates);
        boolean gone = d.failure().filter(f -> f.kind() == FlowFailure.Kind.NOT_FOUND).isPresent();
        if (cached.isPresent()
            && (gone || (d.node().isPresent() && !d.annotated() && d.failure().isEmpty()))) {
          // the cached copy was stale (CONFLICT), the pod is bound or served already, or that
          // incarnation is gone (NOT_FOUND): decide again on the pod read fresh
          s = served.stored(pod);
          d = filter.filter(s, candidates);
        }
        return preempting(s.view(), filterNames(s.view(), d, candidates));
      }
      if (args.nodes().isPresent()) {
        if (args.nodeItems().size() > maxFilterNodes) {
          throw ServingConfig.tooManyNodes(maxFilterNodes, args.nodeItems().size());
        }
        PodView s = served.stored(pod).view();
        return preempting(s, filterNodes(s, args));
      }
      return ExtenderFilterResult.ofError(MISSING_NODES);
    } catch (ClusterException e) {
      return filterFailed(pod, FlowFailure.of(e.getMessage(), e, FlowFailure.Kind.UNAVAILABLE));
    } catch (ExtenderJsonException e) {
      return ExtenderFilterResult.ofError("invalid nodes in extender args: " + e.getMessage());
    }
  }

  /** HAMi's wording: the parser's message, else {@code filter of pod <ns/name> failed: <msg>}. */
  private static ExtenderFilterResult filterFailed(PodView pod, FlowFailure failure) {
    if (failure.kind() == FlowFailure.Kind.INVALID_REQUEST) {
      return ExtenderFilterResult.ofError(failure.message());
    }
    LOG.debug("filter of pod {} failed: {}", pod.key(), failure.message());
    return ExtenderFilterResult.ofError(
        "filter of pod " + pod.key() + " failed: " + failure.message());
  }

  /** A decision's answer; {@code chosen} gets the node and the failed nodes (empty: none). */
  private static ExtenderFilterResult answer(
      PodView pod,
      FilterDecision d,
      ExtenderFilterResult all,
      BiFunction<String, Optional<Map<String, String>>, ExtenderFilterResult> chosen) {
    if (d.failure().isPresent()) {
      return filterFailed(pod, d.failure().get());
    }
    if (!d.devicesRequested()) {
      return all;
    }
    if (d.node().isEmpty()) {
      LOG.debug("pod {} fits no node: {}", pod.key(), d.failedNodes());
      return ExtenderFilterResult.ofFailedNodes(d.failedNodes());
    }
    LOG.debug("pod {} filtered to node {} (score {})", pod.key(), d.node().get(), d.score());
    return chosen.apply(d.node().get(), Optional.of(d.failedNodes()).filter(m -> !m.isEmpty()));
  }

  private ExtenderFilterResult filterNames(
      PodView pod, FilterDecision decision, List<String> candidates) {
    return answer(
        pod,
        decision,
        ExtenderFilterResult.ofNodeNames(candidates),
        (node, failed) ->
            new ExtenderFilterResult(
                Optional.empty(), Optional.of(List.of(node)), failed, Optional.empty(), ""));
  }

  private ExtenderFilterResult filterNodes(PodView pod, ExtenderArgs args)
      throws ClusterException, ExtenderJsonException {
    List<ObjectNode> items = args.nodeItems();
    Map<String, ObjectNode> byName = new LinkedHashMap<>();
    Map<NodeView, List<PodView>> podsOf = new LinkedHashMap<>();
    for (int i = 0; i < items.size(); i++) {
      NodeView nv;
      try {
        nv = JsonViews.nodeView(items.get(i));
      } catch (MalformedObjectException e) {
        throw new ExtenderJsonException("Nodes.items[" + i + "]." + e.field(), e.getMessage(), e);
      }
      byName.put(nv.name(), items.get(i));
      List<ClusterPod> assigned = reader.listPodsAssignedTo(nv.name());
      podsOf.put(
          nv,
          assigned.stream().map(ClusterPod::view).filter(v -> !v.key().equals(pod.key())).toList());
    }
    DraObjects dra = reader.readDraForFilter(byName.keySet());
    List<NodeUsage> snapshot = new ArrayList<>(items.size());
    podsOf.forEach((nv, pods) -> snapshot.add(usage.nodeUsage(nv, pods, dra)));
    return answer(
        pod,
        filter.decide(pod, snapshot),
        new ExtenderFilterResult(
            args.nodes(), Optional.empty(), Optional.empty(), Optional.empty(), ""),
        (node, failed) -> {
          ObjectNode list = JsonNodeFactory.instance.objectNode();
          list.putArray("items").add(byName.get(node));
          return new ExtenderFilterResult(
              Optional.of(list), Optional.empty(), failed, Optional.empty(), "");
        });
  }

  /**
   * The bind verb (HAMi {@code Bind}, spec §2.3) through {@link PodBinder#bind}: gang members
   * (pod-group label or {@code spec.schedulingGroup}) wait for a contended node lock up to the
   * retry timeout; others fail fast.
   *
   * @return {@link ExtenderBindingResult#OK} when bound; else the reason in {@code Error}
   */
  public ExtenderBindingResult bind(ExtenderBindingArgs args) {
    try {
      Optional<ExtenderBindingResult> refused = served.refusal(args);
      return refused.isPresent()
          ? refused.get()
          : answer(
              args, binder.bind(args.podNamespace(), args.podName(), args.podUID(), args.node()));
    } catch (RequestRejectedException e) {
      return new ExtenderBindingResult(e.getMessage());
    }
  }

  /**
   * As {@link #bind} without holding a thread while waiting ({@link PodBinder#bindAsync}; steps on
   * {@code executor}), throwing for a pod not served ({@link #servingSchedulers}) or missing.
   *
   * @return the future result, problems in {@code Error}; completed exceptionally only with {@link
   *     java.util.concurrent.RejectedExecutionException} when the flow's first step is rejected
   * @throws RequestRejectedException naming the pod and why it is not served
   */
  public CompletableFuture<ExtenderBindingResult> bindCheckedAsync(
      ExtenderBindingArgs args, Executor executor) throws RequestRejectedException {
    Optional<ExtenderBindingResult> refused = served.refusal(args);
    return refused.isPresent()
        ? CompletableFuture.completedFuture(refused.get())
        : binder
            .bindAsync(args.podNamespace(), args.podName(), args.podUID(), args.node(), executor)
            .thenApply(r -> answer(args, r));
  }

  /** The answer of a bind flow's result: OK when bound, else its reason (logged, evented). */
  private ExtenderBindingResult answer(ExtenderBindingArgs args, BindResult r) {
    boolean bound = r.outcome() == BindOutcome.BOUND;
    boolean contention = r.failure().filter(FlowFailure::contention).isPresent(); // expected
    LoggingEventBuilder failed =
        (bound || contention ? LOG.atDebug() : LOG.atInfo())
            .addKeyValue("pod", r.podKey())
            .addKeyValue("node", r.node())
            .addKeyValue("attempt", r.lockAttempts())
            .addKeyValue("lockWaitMs", r.timings().lockWait().toMillis())
            .addKeyValue("refitMs", r.timings().refit().toMillis())
            .addKeyValue("annotateMs", r.timings().annotate().toMillis())
            .addKeyValue("bindingMs", r.timings().binding().toMillis())
            .addKeyValue("totalMs", r.timings().total().toMillis());
    if (bound) {
      failed.log("bound");
      return ExtenderBindingResult.OK;
    }
    String reason = r.reason().isEmpty() ? r.outcome().name() : r.reason();
    PodEvents ev = events;
    if (ev != null) {
      ev.bindFailed(args.podNamespace(), args.podName(), args.podUID(), args.node(), reason);
    }
    failed = failed.addKeyValue("outcome", r.outcome());
    OptionalInt status = r.failure().map(FlowFailure::httpStatus).orElse(OptionalInt.empty());
    if (status.isPresent()) {
      failed = failed.addKeyValue("httpStatus", status.getAsInt());
    }
    failed.log("bind failed: {}", CallerMessages.safe(r.reason()));
    return new ExtenderBindingResult(reason);
  }
}
