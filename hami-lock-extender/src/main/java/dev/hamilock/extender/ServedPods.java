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
 * Which pods {@link HamiExtender}'s verbs (and {@link ExtenderPreemption}) serve: the pod as stored
 * (the pod in a request only names it), of a served scheduler ({@link PodSchedulerNames}) and, for
 * a bind, asking for a managed device.
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
   * The bind verb's check when scheduler names are served: the stored pod (from a watched cache
   * where it holds the incarnation: UID, {@code spec.schedulerName} and extended resources are
   * immutable), served, asking for a managed device.
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

  /**
   * The stored pod a request names when this extender serves it (the preempt verb's check, the same
   * as the filter's); empty for a pod of a scheduler not served.
   */
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

  /**
   * The Filter's read where a watched cache holds the request's incarnation ({@link
   * PodSchedulerNames#cachedPod}), refused as {@link #stored(PodView)} refuses; empty when no cache
   * holds it (or no UID was given).
   */
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

  /**
   * The one place both verbs decide whether they serve a pod: the pod as stored (one fresh read),
   * refused when it does not exist, when a non-blank {@code uid} names another incarnation, or when
   * its scheduler is not served.
   */
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
