package dev.hamilock.device.spi.fit;

import com.google.common.collect.Iterables;
import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.FitReason;
import dev.hamilock.device.spi.GpuPolicy;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.InvalidResourceRequestException;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Vendor-neutral fit of a whole pod on a node and across nodes (HAMi {@code pkg/scheduler/score.go}
 * calcScore and {@code scheduler.go} Filter; spec §2.2, §5.8, §5.9): containers in allocation order
 * on their {@link PhaseRows}; per vendor only the devices it owns ({@link
 * DeviceVendor#ownsDeviceType}), ordered by {@link DeviceOrdering}, chosen by {@link
 * DeviceVendor#fit}, a choice that over-commits a device rejected. UNREGISTERED and USAGE_UNKNOWN
 * nodes fail with their reason. {@code spread} picks the lowest node score, else the highest, ties
 * to the smallest name. Unknown policy annotation words are ignored with an {@link
 * AnnotationWarning} ({@link PolicyValues}, HAMi#2767). Thread-safe.
 */
public final class PodFitter {
  /** Pod annotation (HAMi, NVIDIA-named but read by the neutral sort): NUMA-bound placement. */
  public static final String NUMA_BIND_ANNOTATION = "nvidia.com/numa-bind";

  private static final Logger LOG = LoggerFactory.getLogger(PodFitter.class);

  private final VendorRegistry registry;
  private final String defaultGpuPolicy;
  private final String defaultNodePolicy;

  private PodFitter(VendorRegistry registry, String gpu, String node) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.defaultGpuPolicy = PolicyValues.requireGpuPolicy("defaultGpuPolicy", gpu);
    this.defaultNodePolicy = PolicyValues.requireNodePolicy("defaultNodePolicy", node);
  }

  /** A fitter with HAMi's defaults: device policy {@code spread}, node policy {@code binpack}. */
  public static PodFitter create(VendorRegistry registry) {
    return create(registry, GpuPolicy.DEFAULT, "binpack");
  }

  /**
   * A fitter with the scheduler's default policies ({@code --gpu-scheduler-policy}: a comma list of
   * {@link PolicyValues#GPU_POLICY_WORDS}; {@code --node-scheduler-policy}: binpack or spread).
   *
   * @throws PolicyValues.InvalidPolicyValueException naming the setting, value and accepted words
   */
  public static PodFitter create(VendorRegistry registry, String gpuPolicy, String nodePolicy) {
    return new PodFitter(registry, gpuPolicy, nodePolicy);
  }

  public VendorRegistry registry() {
    return registry;
  }

  /**
   * Parses the pod's per-container requests (init containers first) and options.
   *
   * @throws InvalidPodRequestException on a refused resource value or malformed weights
   */
  public PodRequests requests(PodView pod) throws InvalidPodRequestException {
    List<Map<String, ContainerDeviceRequest>> per = new ArrayList<>(pod.containerCount());
    try {
      for (ContainerView c : Iterables.concat(pod.initContainers(), pod.containers())) {
        per.add(containerRequests(c));
      }
    } catch (InvalidResourceRequestException e) {
      throw new InvalidPodRequestException(pod.key(), e.getMessage(), e);
    }
    String weights = pod.annotations().get(HamiAnnotations.DEVICE_SCORING_WEIGHTS);
    ScoringWeights w;
    try {
      w = weights == null ? ScoringWeights.DEFAULT : ScoringWeights.parse(weights);
    } catch (IllegalArgumentException e) {
      throw new InvalidPodRequestException(
          pod.key(),
          HamiAnnotations.DEVICE_SCORING_WEIGHTS + "=" + weights + ": " + e.getMessage(),
          e);
    }
    List<AnnotationWarning> warnings = new ArrayList<>(0);
    String gpu =
        annotated(
            pod,
            HamiAnnotations.GPU_SCHEDULER_POLICY,
            PolicyValues::gpuPolicy,
            "a comma list of " + String.join(", ", PolicyValues.GPU_POLICY_WORDS),
            defaultGpuPolicy,
            warnings);
    String node =
        annotated(
            pod,
            HamiAnnotations.NODE_SCHEDULER_POLICY,
            PolicyValues::nodePolicy,
            "one of " + String.join(", ", PolicyValues.NODE_POLICY_WORDS),
            defaultNodePolicy,
            warnings);
    String numa =
        annotated(
            pod,
            NUMA_BIND_ANNOTATION,
            v -> PolicyValues.goBool(v).map(String::valueOf),
            "Go bool " + String.join(", ", PolicyValues.GO_BOOL_WORDS),
            "false",
            warnings);
    return new PodRequests(
        pod, per, GpuPolicy.parse(gpu), node, w, Boolean.parseBoolean(numa), warnings);
  }

  /** The annotation's accepted value (trimmed), else {@code dflt} with a warning (HAMi#2767). */
  private static String annotated(
      PodView pod,
      String key,
      Function<String, Optional<String>> valid,
      String accepted,
      String dflt,
      List<AnnotationWarning> warnings) {
    String v = pod.annotations().get(key);
    if (v == null) {
      return dflt;
    }
    Optional<String> ok = valid.apply(v);
    if (ok.isPresent()) {
      return ok.get();
    }
    AnnotationWarning w =
        new AnnotationWarning(
            pod.key(), key, v, accepted, "configured default \"" + dflt + "\" used");
    LOG.warn("{}", w.message());
    warnings.add(w);
    return dflt;
  }

  private Map<String, ContainerDeviceRequest> containerRequests(ContainerView c)
      throws InvalidResourceRequestException {
    Map<String, ContainerDeviceRequest> m = new LinkedHashMap<>(2);
    for (DeviceVendor v : registry.vendors()) {
      Optional<ContainerDeviceRequest> r = v.parseRequest(c, registry.config(v.commonWord()));
      if (r.isPresent() && r.get().nums() > 0) {
        m.put(v.commonWord(), r.get());
      }
    }
    return m;
  }

  /**
   * Fits the pod on one node's current usage.
   *
   * @throws InvalidPodRequestException when the pod's requests cannot be parsed
   */
  public NodeFit fit(PodView pod, NodeUsage node) throws InvalidPodRequestException {
    return fit(requests(pod), node, FitContext.newMemo());
  }

  /**
   * Fits parsed requests ({@link #requests}) on one node; never throws for bad node data.
   *
   * @param memo per-pod memo ({@link FitContext#newMemo()}), shared across nodes of one pod
   */
  public NodeFit fit(PodRequests requests, NodeUsage node, Map<Object, Object> memo) {
    if (node.status() != NodeUsage.Status.READY) {
      return NodeFit.failure(node.name(), node.unavailableReason().orElse("node unavailable"));
    }
    List<Map<String, ContainerDeviceRequest>> per = requests.perContainer();
    Map<String, List<List<ContainerDevice>>> result = new LinkedHashMap<>();
    for (Map<String, ContainerDeviceRequest> m : per) {
      for (String v : m.keySet()) {
        result.computeIfAbsent(v, k -> new ArrayList<>(Collections.nCopies(per.size(), List.of())));
      }
    }
    if (result.isEmpty()) {
      return new NodeFit(node.name(), true, PodDevices.empty(), node.baseScore(), "");
    }
    DeviceUsage[] pre = node.devices().toArray(new DeviceUsage[0]);
    PhaseRows phases = PhaseRows.start(requests.roles(), pre);
    for (int ci = 0; ci < per.size(); ci++) {
      if (per.get(ci).isEmpty()) {
        continue;
      }
      DeviceUsage[] work = phases.forContainer(ci);
      String failure = fitContainer(requests, node, ci, per.get(ci), work, result, memo);
      if (failure != null) {
        return NodeFit.failure(node.name(), failure);
      }
    }
    double score = node.baseScore();
    for (String v : result.keySet()) {
      List<DeviceUsage> vd = Arrays.stream(node.positionsOf(v)).mapToObj(p -> pre[p]).toList();
      DeviceVendor vendor = registry.vendor(v).orElseThrow();
      score += vendor.scoreNode(node.node(), vd, result.get(v), requests.gpuPolicy());
    }
    return new NodeFit(node.name(), true, new PodDevices(result), score, "");
  }

  private String fitContainer(
      PodRequests requests,
      NodeUsage node,
      int ci,
      Map<String, ContainerDeviceRequest> reqs,
      DeviceUsage[] work,
      Map<String, List<List<ContainerDevice>>> result,
      Map<Object, Object> memo) {
    for (Map.Entry<String, ContainerDeviceRequest> e : reqs.entrySet()) {
      String vendorWord = e.getKey();
      ContainerDeviceRequest req = e.getValue();
      DeviceVendor vendor = registry.vendor(vendorWord).orElseThrow();
      int[] pos =
          Arrays.stream(node.positionsOf(vendorWord))
              .filter(p -> vendor.ownsDeviceType(work[p].type()))
              .toArray();
      if (req.nums() > pos.length) {
        return FitReason.NODE_INSUFFICIENT_DEVICE.word();
      }
      float[] scores = new float[work.length];
      for (int p : pos) {
        scores[p] = DeviceOrdering.score(work[p], reqs.values(), requests.weights());
      }
      int[] order = pos.clone();
      DeviceOrdering.sort(order, work, scores, requests.gpuPolicy(), requests.numaBind());
      List<DeviceUsage> sorted = Arrays.stream(order).mapToObj(p -> work[p]).toList();
      FitContext ctx = new FitContext(requests.pod(), node.node(), requests.gpuPolicy(), memo);
      ContainerFit f = vendor.fit(sorted, req, ctx);
      if (!f.fits()) {
        return f.reason().isEmpty() ? FitReason.NODE_UNFIT_POD.word() : f.reason();
      }
      for (ContainerDevice cd : f.devices()) {
        int p = node.positionOf(cd.uuid());
        if (p < 0
            || !work[p].vendor().equals(vendorWord)
            || !vendor.ownsDeviceType(work[p].type())) {
          return "vendor " + vendorWord + " chose unknown device " + cd.uuid();
        }
        DeviceUsage after = work[p].withAllocation(cd);
        if (!after.overCommit().isEmpty() && work[p].overCommit().isEmpty()) {
          return "vendor " + vendorWord + " over-committed device " + cd.uuid();
        }
        work[p] = after;
      }
      result.get(vendorWord).set(ci, f.devices());
    }
    return null;
  }

  /**
   * Fits the pod across candidate nodes' usage and picks one (HAMi Filter without side effects).
   *
   * @return chosen node (if any), passing nodes and per-node failure reasons
   * @throws InvalidPodRequestException when the pod's requests cannot be parsed
   */
  public FilterResult filter(PodView pod, Collection<NodeUsage> candidates)
      throws InvalidPodRequestException {
    PodRequests requests = requests(pod);
    if (!requests.requestsDevices()) {
      List<String> all = candidates.stream().map(NodeUsage::name).toList();
      return new FilterResult(false, Optional.empty(), all, Map.of(), requests.warnings());
    }
    boolean spread = requests.nodePolicy().equals("spread");
    Map<Object, Object> memo = FitContext.newMemo();
    NodeFit best = null;
    List<String> passed = new ArrayList<>();
    Map<String, String> failed = new HashMap<>();
    for (NodeUsage n : candidates) {
      NodeFit f = fit(requests, n, memo);
      if (!f.fits()) {
        failed.put(n.name(), f.reason());
        continue;
      }
      passed.add(n.name());
      if (best == null || better(f, best, spread)) {
        best = f;
      }
    }
    return new FilterResult(true, Optional.ofNullable(best), passed, failed, requests.warnings());
  }

  private static boolean better(NodeFit a, NodeFit b, boolean spread) {
    int c = Double.compare(a.score(), b.score());
    return c != 0 ? (spread ? c < 0 : c > 0) : a.nodeName().compareTo(b.nodeName()) < 0;
  }
}
