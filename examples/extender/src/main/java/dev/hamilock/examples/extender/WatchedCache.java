package dev.hamilock.examples.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.extender.PodSchedulerNames;
import dev.hamilock.extender.RunningPods;
import dev.hamilock.k8s.view.KubernetesViews;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The filter's node data from a shared, watched cache (issue 15 item 2), as HAMi's scheduler reads
 * its informer caches: one node informer and one pod informer (client-java {@link
 * SharedInformerFactory}: LIST once, then WATCH), with the pods indexed by HAMi's {@code
 * hami.io/vgpu-node} annotation.
 *
 * <p><b>Cost.</b> At start: one LIST of nodes and one of pods, then two long-lived WATCH streams;
 * memory: every Node and Pod object of the cluster. Per filter request: <em>no</em> API read for
 * the candidates ({@link #readNode} and {@link #listPodsAssignedTo} answer from the cache) — the
 * filter itself still does two fresh GETs of the pod being scheduled (the stored pod it fits and
 * writes for, never the request's copy; is it already served?) and one PATCH of HAMi's Filter
 * annotations, whatever the number of candidates. Was: one GET per node plus one LIST per node per
 * request.
 *
 * <p><b>Freshness.</b> The cache may lag the API server by the watch latency; a filter may then
 * pick a node whose last allocation it has not seen yet. The bind flow never uses this cache: it
 * re-fits under the node lock with quorum reads ({@link #readPod}, {@link #listPodsOnNode} and the
 * bind's own reader are fresh), so a stale filter choice is refused at bind, never over-committed.
 *
 * <p>It also answers both verbs' {@code spec.schedulerName} question from the pod cache when it
 * holds the incarnation asked about (the field and the UID are immutable, so the answer is exact),
 * falling back to one GET for a pod the cache has not seen yet or holds with another UID.
 *
 * <p>The preempt verb's pods ({@link RunningPods}) come from the pod cache too: every pod bound or
 * allocated on a node, with {@code spec.priority} (0 when unset, kube-scheduler {@code
 * corev1helpers.PodPriority}) and {@code status.startTime} (now when unset, {@code
 * util.GetPodStartTime}).
 */
final class WatchedCache extends ForwardingCluster
    implements PodSchedulerNames, RunningPods, AutoCloseable {
  static final String BY_VGPU_NODE = "hami.io/vgpu-node";

  private final SharedInformerFactory factory;
  private final SharedIndexInformer<V1Node> nodes;
  private final SharedIndexInformer<V1Pod> pods;
  private final CoreV1Api core;

  WatchedCache(ApiClient apiClient, ApiClient watchApiClient, ClusterReader fresh) {
    super(Objects.requireNonNull(fresh, "fresh"), null);
    this.core = new CoreV1Api(apiClient);
    this.factory = new SharedInformerFactory(watchApiClient);
    // one line per resource at most every 30 s while the API server cannot be reached, instead of
    // client-java's stack trace per failed attempt (about one a second)
    InformerFailureLog failures =
        new InformerFailureLog(watchApiClient.getBasePath(), System::nanoTime);
    this.nodes =
        factory.sharedIndexInformerFor(
            new GenericKubernetesApi<>(
                V1Node.class, V1NodeList.class, "", "v1", "nodes", watchApiClient),
            V1Node.class,
            0,
            "",
            failures.handler("nodes"));
    this.pods =
        factory.sharedIndexInformerFor(
            new GenericKubernetesApi<>(
                V1Pod.class, V1PodList.class, "", "v1", "pods", watchApiClient),
            V1Pod.class,
            0,
            "",
            failures.handler("pods"));
    pods.addIndexers(
        Map.of(
            BY_VGPU_NODE,
            p -> {
              Map<String, String> a =
                  p.getMetadata() == null ? null : p.getMetadata().getAnnotations();
              String n = a == null ? null : a.get(HamiAnnotations.VGPU_NODE);
              return n == null ? List.of() : List.of(n);
            }));
  }

  void start() {
    factory.startAllRegisteredInformers();
  }

  /**
   * @return both informers listed and watching
   */
  boolean synced() {
    return nodes.hasSynced() && pods.hasSynced();
  }

  @Override
  public Optional<NodeView> readNode(String name) {
    V1Node n = nodes.getIndexer().getByKey(name);
    return n == null ? Optional.empty() : Optional.of(KubernetesViews.nodeView(n));
  }

  /**
   * @return every node the informer holds (the preemption worker's "fits anywhere?" check)
   */
  List<NodeView> nodes() {
    return nodes.getIndexer().list().stream().map(KubernetesViews::nodeView).toList();
  }

  /**
   * @return every pod the informer holds that no node is bound to (the preemption worker's gang
   *     members)
   */
  List<PodView> unbound() {
    return pods.getIndexer().list().stream()
        .map(KubernetesViews::podView)
        .filter(v -> v.nodeName().isEmpty())
        .toList();
  }

  @Override
  public List<ClusterPod> listPodsAssignedTo(String node) {
    List<ClusterPod> out = new ArrayList<>();
    for (V1Pod p : pods.getIndexer().byIndex(BY_VGPU_NODE, node)) {
      out.add(
          new ClusterPod(
              KubernetesViews.podView(p),
              Optional.ofNullable(p.getSpec() == null ? null : p.getSpec().getNodeName()),
              Objects.requireNonNullElse(p.getMetadata().getResourceVersion(), "")));
    }
    return out;
  }

  @Override
  public Optional<String> schedulerName(String namespace, String name, String uid)
      throws ClusterException {
    V1Pod p = pods.getIndexer().getByKey(namespace + "/" + name);
    if (p == null || !uid.equals(p.getMetadata().getUid())) {
      try {
        p = core.readNamespacedPod(name, namespace).execute();
      } catch (ApiException e) {
        if (e.getCode() == 404) {
          return Optional.empty();
        }
        throw new ClusterException(
            e.getCode() == 0 ? ClusterException.Kind.UNAVAILABLE : ClusterException.Kind.REJECTED,
            "GET pod " + namespace + "/" + name + ": HTTP " + e.getCode(),
            e);
      }
    }
    String s = p.getSpec() == null ? null : p.getSpec().getSchedulerName();
    return Optional.of(s == null ? "" : s);
  }

  @Override
  public List<RunningPod> all() {
    List<RunningPod> out = new ArrayList<>();
    java.time.Instant now = java.time.Instant.now();
    for (V1Pod p : pods.getIndexer().list()) {
      var view = KubernetesViews.podView(p);
      if (view.nodeName().isEmpty() && !view.annotations().containsKey(HamiAnnotations.VGPU_NODE)) {
        continue;
      }
      var start = p.getStatus() == null ? null : p.getStatus().getStartTime();
      out.add(RunningPod.of(view, start == null ? now : start.toInstant()));
    }
    return out;
  }

  @Override
  public void close() {
    factory.stopAllRegisteredInformers(true);
  }
}
