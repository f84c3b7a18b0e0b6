package dev.hamilock.examples.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import dev.hamilock.extender.PodSchedulerNames;
import dev.hamilock.extender.RunningPods;
import dev.hamilock.k8s.view.KubernetesViews;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
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
 * the candidates ({@link #readNode} and {@link #listPodsAssignedTo} answer from the cache) nor for
 * the pod being scheduled ({@link #cachedPod}: the stored pod it fits and writes for, never the
 * request's copy) — one PATCH of HAMi's Filter annotations, conditioned on the cached copy's
 * resourceVersion, whatever the number of candidates; a copy the watch has not brought up to date
 * yet fails that PATCH, and the pod is read fresh and filtered again (one GET and one PATCH more).
 * Was: one GET per node plus one LIST per node per request, then one pod GET.
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
 * <p><b>DRA</b> (issue 28 item 1, issue 25 item 2): where {@code resource.k8s.io/v1} is served when
 * the cache starts (one {@code LIST resourceslices?limit=1} tells), two more informers watch
 * ResourceSlices (indexed by {@code spec.nodeName}) and ResourceClaims, and the Filter's {@link
 * #readDraForFilter} answers from them: no DRA LIST per filter request (was two). Their objects are
 * client-java's dynamic ones (a JSON tree), not its generated models, whose strict validation
 * rejects any field they do not know (kube-api-notes §4.2; an API server newer than the client adds
 * fields). Until both have synced — or for good, where RBAC grants {@code list} but not {@code
 * watch} on them (one WARN line per 30 s says so) — and on a cluster that did not serve DRA at
 * start, the read goes to the fresh reader as before (LISTs from the watch cache; no request at all
 * without DRA). The same lag as the pod cache's, and the same guard: the bind's re-fit under the
 * node lock reads claims consistently ({@link ClusterReader#readDra}), so a claim the watch has not
 * delivered yet is refused at bind, never over-committed.
 *
 * <p>The preempt verb's pods ({@link RunningPods}) come from the pod cache too: every pod bound or
 * allocated on a node, with {@code spec.priority} (0 when unset, kube-scheduler {@code
 * corev1helpers.PodPriority}) and {@code status.startTime} (now when unset, {@code
 * util.GetPodStartTime}).
 */
final class WatchedCache extends ForwardingCluster
    implements PodSchedulerNames, RunningPods, AutoCloseable {
  static final String BY_VGPU_NODE = "hami.io/vgpu-node";
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WatchedCache.class);

  private final SharedInformerFactory factory;
  private final SharedIndexInformer<V1Node> nodes;
  private final SharedIndexInformer<V1Pod> pods;
  private final CoreV1Api core;
  private final ApiClient apiClient;
  private final ApiClient watchApiClient;
  private final InformerFailureLog failures;
  private final WatchedPods watchedPods = new WatchedPods();

  /** The DRA informers, set by {@link #start} where {@code resource.k8s.io/v1} is served. */
  private volatile SharedIndexInformer<DynamicKubernetesObject> slices;

  private volatile SharedIndexInformer<DynamicKubernetesObject> claims;

  private final List<SharedInformerFactory> draFactories =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  WatchedCache(ApiClient apiClient, ApiClient watchApiClient, ClusterReader fresh) {
    super(Objects.requireNonNull(fresh, "fresh"), null);
    this.apiClient = apiClient;
    this.watchApiClient = watchApiClient;
    this.core = new CoreV1Api(apiClient);
    this.factory = new SharedInformerFactory(watchApiClient);
    // one line per resource at most every 30 s while the API server cannot be reached, instead of
    // client-java's stack trace per failed attempt (about one a second)
    this.failures = new InformerFailureLog(watchApiClient.getBasePath(), System::nanoTime);
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
            WatchedPodsFeed.feeding(
                new GenericKubernetesApi<>(
                    V1Pod.class, V1PodList.class, "", "v1", "pods", watchApiClient),
                watchedPods),
            V1Pod.class,
            0,
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
    if (servesDra()) {
      claims = dra("resourceclaims", "ResourceClaim");
      slices = dra("resourceslices", "ResourceSlice");
      slices.addIndexers(
          Map.of(
              BY_NODE_NAME,
              s -> {
                var spec = s.getRaw().getAsJsonObject("spec");
                var node = spec == null ? null : spec.get("nodeName");
                return node == null || !node.isJsonPrimitive()
                    ? List.of()
                    : List.of(node.getAsString());
              }));
    }
    factory.startAllRegisteredInformers();
    draFactories.forEach(SharedInformerFactory::startAllRegisteredInformers);
  }

  private static final String DRA_GROUP = "resource.k8s.io";
  private static final String BY_NODE_NAME = "spec.nodeName";

  /**
   * @return whether {@code LIST resourceslices?limit=1} succeeds; a failure to ask (the API server
   *     not reachable yet) is a no: the fresh reader's LISTs count DRA usage then
   */
  private boolean servesDra() {
    ListOptions one = new ListOptions();
    one.setLimit(1);
    try {
      var answer = new DynamicKubernetesApi(DRA_GROUP, "v1", "resourceslices", apiClient).list(one);
      if (!answer.isSuccess() && answer.getHttpStatusCode() != 404) { // 404: no DRA, nothing to say
        LOG.info(
            "DRA objects not watched (the Filter lists them per request): LIST resourceslices"
                + " answered HTTP {}",
            answer.getHttpStatusCode());
      }
      return answer.isSuccess();
    } catch (RuntimeException e) {
      LOG.info("DRA objects not watched (the Filter lists them per request): {}", e.toString());
      return false;
    }
  }

  /**
   * An informer of its own factory (a factory holds one informer per object class, and both DRA
   * resources are {@link DynamicKubernetesObject}s: the second would replace the first, which then
   * never starts), listing through a {@link ListerWatcher} that gives each listed item its {@code
   * kind} and {@code apiVersion}: kube-apiserver leaves them out of list items, and client-java
   * 27's reflector asks a dynamic object for its kind, which then throws (NullPointerException in
   * {@code DynamicKubernetesObject.getKind}, every relist: the informer never syncs).
   */
  private SharedIndexInformer<DynamicKubernetesObject> dra(String resource, String kind) {
    GenericKubernetesApi<DynamicKubernetesObject, DynamicKubernetesListObject> api =
        new GenericKubernetesApi<>(
            DynamicKubernetesObject.class,
            DynamicKubernetesListObject.class,
            DRA_GROUP,
            "v1",
            resource,
            watchApiClient);
    ListerWatcher<DynamicKubernetesObject, DynamicKubernetesListObject> typed =
        new ListerWatcher<>() {
          @Override
          public DynamicKubernetesListObject list(CallGeneratorParams params) throws ApiException {
            DynamicKubernetesListObject list =
                api.list(options(params)).throwsApiException().getObject();
            for (DynamicKubernetesObject item : list.getItems()) {
              item.setApiVersion(DRA_GROUP + "/v1");
              item.setKind(kind);
            }
            return list;
          }

          @Override
          public Watchable<DynamicKubernetesObject> watch(CallGeneratorParams params)
              throws ApiException {
            return api.watch(options(params));
          }
        };
    SharedInformerFactory own = new SharedInformerFactory(watchApiClient);
    draFactories.add(own);
    return own.sharedIndexInformerFor(
        typed, DynamicKubernetesObject.class, 0, failures.handler(resource));
  }

  /**
   * {@return the pods the pod informer's watch brought, in its order: what the bind's reader
   * answers its re-fit's pod lists from once they are provably current}
   */
  WatchedPods watchedPods() {
    return watchedPods;
  }

  /**
   * The bind flow's reader: {@code fresh}, but for the reads under the lock that need not be: the
   * re-fit's pod lists at its allocation's version come from {@link #watchedPods} once it holds
   * that version (else {@code fresh} lists), the node at the version its lock was seen free from
   * the node informer once its copy is that new (else {@code fresh} reads it), and the DRA snapshot
   * it checks before use ({@link ClusterReader#readDraForFilter}) from the DRA informers, as the
   * Filter's.
   *
   * @param hedge how long a node read waits for the node informer before {@code fresh} reads it,
   *     and a pod list for the pod watch before {@code fresh} also lists
   * @param wait how long a pod list waits for the pod watch in all (see {@link
   *     WatchedPods#readingFirst})
   */
  ClusterReader bindReader(ClusterReader fresh, java.time.Duration hedge, java.time.Duration wait) {
    return new BindReader(this, watchedPods.readingFirst(fresh, hedge, wait), hedge);
  }

  /** {@return the node informer's copy of the node, null if it holds none} */
  V1Node nodeCopy(String name) {
    return nodes.getIndexer().getByKey(name);
  }

  static ListOptions options(CallGeneratorParams params) {
    ListOptions o = new ListOptions();
    o.setResourceVersion(params.resourceVersion);
    o.setTimeoutSeconds(params.timeoutSeconds);
    return o;
  }

  /**
   * @return whether the DRA informers are running and have synced (false where DRA was not served
   *     at {@link #start})
   */
  boolean draWatched() {
    var s = slices;
    var c = claims;
    return s != null && c != null && s.hasSynced() && c.hasSynced();
  }

  /**
   * {@inheritDoc} From the DRA informers once {@link #draWatched}: the slices of {@code nodes} (the
   * one node's, as the fresh reader's {@code fieldSelector}, or all of them for several) and every
   * claim; else the fresh reader's answer.
   *
   * @throws ClusterException {@link ClusterException.Kind#REJECTED} naming a malformed object, as
   *     the fresh reader does
   */
  @Override
  public DraObjects readDraForFilter(Collection<String> nodes) throws ClusterException {
    if (!draWatched() || nodes.isEmpty()) {
      return super.readDraForFilter(nodes);
    }
    List<DynamicKubernetesObject> sliceObjects =
        inListOrder(
            nodes.size() == 1
                ? slices.getIndexer().byIndex(BY_NODE_NAME, nodes.iterator().next())
                : slices.getIndexer().list());
    List<ResourceSliceView> sliceViews = new ArrayList<>(sliceObjects.size());
    List<ResourceClaimView> claimViews = new ArrayList<>();
    try {
      for (DynamicKubernetesObject s : sliceObjects) {
        sliceViews.add(JsonViews.resourceSliceView(json(s)));
      }
      for (DynamicKubernetesObject c : inListOrder(claims.getIndexer().list())) {
        claimViews.add(JsonViews.resourceClaimView(json(c)));
      }
    } catch (MalformedObjectException e) {
      throw new ClusterException(
          ClusterException.Kind.REJECTED, "reading /apis/resource.k8s.io/v1: " + e.getMessage(), e);
    }
    return new DraObjects(sliceViews, claimViews);
  }

  /**
   * The objects in the order a LIST answers them ({@code namespace/name}, etcd's key order), not
   * the informer's hash order: the usage's texts (a node's unresolved claims) are the fresh
   * reader's.
   */
  private static List<DynamicKubernetesObject> inListOrder(List<DynamicKubernetesObject> objects) {
    List<DynamicKubernetesObject> sorted = new ArrayList<>(objects);
    sorted.sort(
        java.util.Comparator.comparing(
            o ->
                Objects.requireNonNullElse(o.getMetadata().getNamespace(), "")
                    + "/"
                    + o.getMetadata().getName()));
    return sorted;
  }

  private static com.fasterxml.jackson.databind.JsonNode json(DynamicKubernetesObject o)
      throws MalformedObjectException {
    return JsonViews.readObject(o.getRaw().toString().getBytes(StandardCharsets.UTF_8));
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
      out.add(clusterPod(p));
    }
    return out;
  }

  /**
   * {@inheritDoc} From the pod informer: the Filter sends no pod GET while the cache is current
   * (issue 25).
   */
  @Override
  public Optional<ClusterPod> cachedPod(String namespace, String name, String uid) {
    V1Pod p = pods.getIndexer().getByKey(namespace + "/" + name);
    if (p == null || !uid.equals(p.getMetadata().getUid())) {
      return Optional.empty(); // a copy without resourceVersion is refused by ServedPods.cached
    }
    return Optional.of(clusterPod(p));
  }

  static ClusterPod clusterPod(V1Pod p) {
    return new ClusterPod(
        KubernetesViews.podView(p),
        Optional.ofNullable(p.getSpec() == null ? null : p.getSpec().getNodeName()),
        Objects.requireNonNullElse(p.getMetadata().getResourceVersion(), ""));
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
    draFactories.forEach(f -> f.stopAllRegisteredInformers(true));
  }
}
