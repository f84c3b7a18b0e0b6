package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderBindingResult;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which pods the verbs serve: the stored pod the request names, of a served scheduler ({@link
 * PodSchedulerNames}) and, for a bind, asking for a managed device.
 */
final class ServedPods {
  private static final Logger LOG = LoggerFactory.getLogger(HamiExtender.class);
  private static final String NONE = "nothing was changed";
  private final ClusterReader reader;
  private final VendorRegistry registry;
  private final PodFitter requestParser;
  private final Set<String> schedulerNames; // empty: any
  private final PodSchedulerNames lookup; // null: no scheduler check

  ServedPods(
      ClusterReader reader,
      VendorRegistry registry,
      Set<String> schedulerNames,
      PodSchedulerNames lookup) {
    this.reader = reader;
    this.registry = registry;
    this.requestParser = PodFitter.create(registry);
    this.schedulerNames = schedulerNames;
    this.lookup = lookup;
  }

  private void requireServed(String podKey, String scheduler) throws RequestRejectedException {
    if (!schedulerNames.contains(scheduler)) {
      LOG.atInfo()
          .addKeyValue("pod", podKey)
          .addKeyValue("schedulerName", CallerMessages.safe(scheduler))
          .log("refused: scheduler not served");
      throw new RequestRejectedException(
          "scheduler_name",
          "pod %s has schedulerName %s, which this extender does not serve (serves: %s); %s"
              .formatted(podKey, scheduler, String.join(",", new TreeSet<>(schedulerNames)), NONE));
    }
  }

  private String managedResources() {
    return registry.vendors().stream()
        .map(v -> registry.config(v.commonWord()).resourceNames().count())
        .collect(Collectors.joining(","));
  }

  /**
   * The bind verb's check: the stored (or cached) pod is served and asks for a managed device.
   *
   * @return the answer in Error (a blank name or node, a read failure), or empty when admitted
   */
  Optional<ExtenderBindingResult> refusal(ExtenderBindingArgs args)
      throws RequestRejectedException {
    String missing =
        args.podName().isBlank()
            ? "PodName"
            : args.podNamespace().isBlank() ? "PodNamespace" : args.node().isBlank() ? "Node" : "";
    if (!missing.isEmpty()) {
      return Optional.of(new ExtenderBindingResult("extender binding args missing " + missing));
    }
    if (lookup == null) {
      return Optional.empty();
    }
    String key = args.podNamespace() + "/" + args.podName();
    try {
      Optional<ClusterPod> cached = cached(args.podNamespace(), args.podName(), args.podUID());
      ClusterPod pod =
          cached.isPresent()
              ? cached.get()
              : stored(args.podNamespace(), args.podName(), args.podUID());
      if (!requestParser.requests(pod.view()).requestsDevices()) {
        throw new RequestRejectedException(
            "no_managed_resource",
            "pod %s asks for no device this extender manages (%s); %s"
                .formatted(key, managedResources(), NONE));
      }
      return Optional.empty();
    } catch (ClusterException e) {
      String why = "bind of pod " + key + " failed before any change: " + e.getMessage();
      return Optional.of(new ExtenderBindingResult(why));
    } catch (InvalidPodRequestException e) {
      throw new RequestRejectedException("invalid_request", e.getMessage() + "; " + NONE);
    }
  }

  /** The preempt verb's check: the stored pod, empty for a pod of a scheduler not served. */
  Optional<PodView> storedIfServed(PodView request)
      throws RequestRejectedException, ClusterException {
    try {
      return Optional.of(stored(request).view());
    } catch (RequestRejectedException e) {
      if (e.reason().equals("scheduler_name")) {
        return Optional.empty();
      }
      throw e;
    }
  }

  ClusterPod stored(PodView request) throws RequestRejectedException, ClusterException {
    return stored(request.namespace(), request.name(), request.uid());
  }

  /** The pod from {@link PodSchedulerNames#cachedPod}, refused as stored; empty if not held. */
  Optional<ClusterPod> cached(PodView request) throws RequestRejectedException, ClusterException {
    return cached(request.namespace(), request.name(), request.uid());
  }

  private Optional<ClusterPod> cached(String namespace, String name, String uid)
      throws RequestRejectedException, ClusterException {
    if (lookup == null || uid.isBlank()) {
      return Optional.empty();
    }
    // without a resourceVersion the Filter's patch would be sent unconditioned on the copy
    Optional<ClusterPod> pod =
        lookup
            .cachedPod(namespace, name, uid)
            .filter(p -> uid.equals(p.view().uid()) && !p.resourceVersion().isEmpty());
    if (pod.isPresent()) {
      requireServed(namespace, name, uid);
    }
    return pod;
  }

  /** The pod read fresh, refused when missing, of another {@code uid}, or not served. */
  private ClusterPod stored(String namespace, String name, String uid)
      throws RequestRejectedException, ClusterException {
    String key = namespace + "/" + name;
    Optional<ClusterPod> pod = reader.readPod(namespace, name);
    if (pod.isEmpty()) {
      throw notFound(key);
    }
    String storedUid = pod.get().view().uid();
    if (!uid.isBlank() && !uid.equals(storedUid)) {
      throw new RequestRejectedException(
          "pod_uid",
          "pod %s is stored with uid %s, not the request's %s; %s"
              .formatted(key, storedUid, CallerMessages.safe(uid), NONE));
    }
    requireServed(namespace, name, storedUid);
    return pod.get();
  }

  private void requireServed(String namespace, String name, String uid)
      throws RequestRejectedException, ClusterException {
    if (lookup != null) {
      String key = namespace + "/" + name;
      Optional<String> scheduler = lookup.schedulerName(namespace, name, uid);
      if (scheduler.isEmpty()) {
        throw notFound(key);
      }
      requireServed(
          key, scheduler.get().isEmpty() ? HamiExtender.DEFAULT_SCHEDULER : scheduler.get());
    }
  }

  private static RequestRejectedException notFound(String key) {
    return new RequestRejectedException("pod_not_found", "pod " + key + " not found; " + NONE);
  }
}
