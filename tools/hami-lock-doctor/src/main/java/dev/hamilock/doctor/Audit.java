package dev.hamilock.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.DraDriver;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.PodUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Location;
import io.kubernetes.client.openapi.ApiClient;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * {@code hami-lock-doctor audit}: read-only over-commit audit. Lists every node and pod (all
 * namespaces) and rebuilds each card's usage as the scheduler does ({@link
 * UsageReconstructor#podUsage(PodView)} onto {@link
 * UsageReconstructor#registeredDevices(NodeView)}, plus {@code resource.k8s.io/v1} ResourceClaims
 * via {@link UsageReconstructor#plusDra}, skipped on a 404). ERROR findings unless marked:
 *
 * <ul>
 *   <li>{@link #AU01} a card over its slots, memory (MiB) or cores (% of a card);
 *   <li>{@link #AU02} a pod bound to another node than its {@code hami.io/vgpu-node} names;
 *   <li>{@link #AU03} an allocation naming a card (or node) the cluster does not register;
 *   <li>{@link #AU04} a Running pod asking for a vendor's count resource without a HAMi allocation
 *       (not via DRA, issue 28): the device plugin gives it cards nobody counts;
 *   <li>{@link #AU05} what cannot be decoded and so is not audited;
 *   <li>{@link #AU06} (WARNING) a card both a HAMi registration and a DRA ResourceSlice list;
 *   <li>{@link #AU07} a Running pod with an allocation whose {@code hami.io/bind-phase} is not
 *       {@code success}: the device plugin ({@code pkg/device-plugin/nvidiadevice/plugin.go}
 *       Allocate) finds the pod it serves through the node lock's holder, so a lock removed before
 *       the Binding can hand this pod the next holder's allocation, which AU01 cannot see;
 *   <li>{@link #AU08} (WARNING) a DeviceClass mapping a vendor's resource to DRA (see {@link
 *       #mappedCountResources}).
 * </ul>
 *
 * <p>Only HAMi's wire format is read, so HAMi's own Go extender is audited the same way. Exit
 * status: 1 on any finding, 0 clean, 2 when nodes or pods could not be listed.
 */
final class Audit {

  /** Finding id: a card over its slots, memory or cores. */
  static final String AU01 = "AU01";

  /** Finding id: a pod bound to another node than its allocation names. */
  static final String AU02 = "AU02";

  /** Finding id: an allocation naming a card the node does not register. */
  static final String AU03 = "AU03";

  /** Finding id: a Running pod asking for cards without a HAMi allocation. */
  static final String AU04 = "AU04";

  /** Finding id: something the audit cannot decode. */
  static final String AU05 = "AU05";

  /** Finding id (WARNING): a card both HAMi's registration and a DRA ResourceSlice list. */
  static final String AU06 = "AU06";

  /** Finding id: a Running pod with an allocation the device plugin's hand-off never served. */
  static final String AU07 = "AU07";

  /** Finding id (WARNING): a DeviceClass maps a count resource nodes also advertise. */
  static final String AU08 = "AU08";

  static final Cluster.Resource DEVICE_CLASSES =
      new Cluster.Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass");
  static final Cluster.Resource RESOURCE_SLICES =
      new Cluster.Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice");
  static final Cluster.Resource RESOURCE_CLAIMS =
      new Cluster.Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim");

  private final Cluster cluster;
  private final VendorRegistry registry;

  Audit(ApiClient client, VendorRegistry registry) {
    this.cluster =
        new Cluster(Objects.requireNonNull(client, "client"), java.time.Clock.systemUTC());
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  DoctorReport run() {
    List<ClusterReadException> unreadable = new ArrayList<>();
    List<JsonNode> nodeObjects = listAll(Cluster.NODES, unreadable);
    List<JsonNode> podObjects = listAll(Cluster.PODS, unreadable);
    List<Finding> findings = new ArrayList<>();
    if (!unreadable.isEmpty()) {
      return new DoctorReport(
          "audit", List.of(), Optional.empty(), Optional.empty(), findings, List.of(), unreadable);
    }
    List<String> notes = new ArrayList<>();
    DraObjects dra = dra(cluster, findings, notes);
    UsageReconstructor reconstructor = new UsageReconstructor(registry, cluster.serverClock());
    Map<String, NodeUsage> registered = new LinkedHashMap<>();
    for (JsonNode n : nodeObjects) {
      NodeView v;
      try {
        v = JsonViews.nodeView(n);
      } catch (MalformedObjectException e) {
        findings.add(
            finding(
                AU05,
                "node-unreadable",
                "Node " + Json.name(n),
                "",
                "the device layer cannot read this node (" + e.getMessage() + "): not audited",
                ""));
        continue;
      }
      NodeUsage u = reconstructor.registeredDevices(v);
      registered.put(v.name(), u);
      u.registrationErrors()
          .forEach(
              (vendor, why) ->
                  findings.add(
                      finding(
                          AU05,
                          "registration-undecodable",
                          "Node " + v.name(),
                          "metadata.annotations",
                          vendor
                              + " registration cannot be decoded ("
                              + why
                              + "): its cards are"
                              + " not audited",
                          "Fix the device plugin's registration on this node.")));
    }
    sharedCards(registered, dra, findings);
    mappedCountResources(nodeObjects, findings, notes);
    Map<String, List<PodUsage>> byNode = new LinkedHashMap<>();
    int allocated = 0;
    for (JsonNode p : podObjects) {
      PodView pod;
      try {
        pod = JsonViews.podView(p);
      } catch (MalformedObjectException e) {
        findings.add(
            finding(
                AU05,
                "pod-unreadable",
                "Pod " + Json.key(p),
                "",
                "the device layer cannot read this pod (" + e.getMessage() + "): not audited",
                ""));
        continue;
      }
      Optional<PodUsage> usage = reconstructor.podUsage(pod);
      usage.ifPresent(u -> byNode.computeIfAbsent(u.nodeName(), k -> new ArrayList<>()).add(u));
      if (usage.isPresent()) {
        allocated++;
        String phase = pod.annotations().getOrDefault(HamiAnnotations.BIND_PHASE, "");
        if (pod.phase() == PodView.Phase.RUNNING
            && !usage.get().devices().isEmpty()
            && !phase.equals("success")) {
          findings.add(
              finding(
                  AU07,
                  "running-without-hand-off",
                  "Pod " + pod.key(),
                  "metadata.annotations[\"" + HamiAnnotations.BIND_PHASE + "\"]",
                  "Running with a HAMi allocation on node "
                      + pod.nodeName().orElse("?")
                      + " but "
                      + HamiAnnotations.BIND_PHASE
                      + (phase.isEmpty() ? " absent" : "=\"" + phase + "\"")
                      + ": the device plugin never served this pod its allocation, so its"
                      + " containers may run on another pod's cards (e.g. the node lock was"
                      + " removed between the scheduler's last confirmation and its Binding)",
                  "Delete the pod so it is scheduled and handed off again."));
        }
      }
      if (pod.phase() == PodView.Phase.RUNNING
          && usage.map(u -> u.devices().isEmpty() && u.decodable()).orElse(true)) {
        askedCount(pod)
            .ifPresent(
                resource ->
                    findings.add(
                        finding(
                            AU04,
                            "gpu-pod-without-allocation",
                            "Pod " + pod.key(),
                            "spec.containers[*].resources",
                            "Running on node "
                                + pod.nodeName().orElse("?")
                                + " asking for "
                                + resource
                                + " without a HAMi allocation ("
                                + HamiAnnotations.VGPU_NODE
                                + " and the allocated devices): it gets whole cards the"
                                + " scheduler does not count",
                            "Schedule GPU pods with the HAMi scheduler (spec.schedulerName), or"
                                + " delete this pod.")));
      }
    }
    int cards = 0;
    for (Map.Entry<String, List<PodUsage>> e : byNode.entrySet()) {
      NodeUsage base = registered.get(e.getKey());
      for (PodUsage u : e.getValue()) {
        u.decodeError()
            .ifPresent(
                why ->
                    findings.add(
                        finding(
                            AU05,
                            "allocation-undecodable",
                            "Pod " + u.podKey(),
                            "metadata.annotations",
                            why + ": node " + u.nodeName() + "'s usage is unknown",
                            "")));
        u.nodeMismatch()
            .ifPresent(
                m ->
                    findings.add(
                        finding(
                            AU02,
                            "allocation-names-another-node",
                            "Pod " + u.podKey(),
                            "metadata.annotations[\"" + HamiAnnotations.VGPU_NODE + "\"]",
                            m.message() + "; the cards it uses there are not in its allocation",
                            "Delete the pod so it is scheduled again.")));
        if (u.nodeMismatch().isPresent()) {
          continue;
        }
        // distinct: a card an exclusive container shares is two entries (UsageReconstructor)
        for (String uuid : u.devices().stream().map(ContainerDevice::uuid).distinct().toList()) {
          if (base == null || base.positionOf(uuid) < 0) {
            findings.add(
                finding(
                    AU03,
                    "allocation-names-unknown-card",
                    "Pod " + u.podKey(),
                    "metadata.annotations",
                    "allocation names card "
                        + uuid
                        + (base == null
                            ? " on node " + u.nodeName() + ", which does not exist"
                            : ", which node " + u.nodeName() + " does not register")
                        + ": that usage is counted nowhere",
                    "Delete the pod so it is scheduled again; check the node's registration."));
          }
        }
      }
    }
    for (NodeUsage base : registered.values()) {
      List<PodUsage> pods = byNode.getOrDefault(base.name(), List.of());
      NodeUsage byPods = UsageReconstructor.apply(base, pods);
      NodeUsage used = reconstructor.plusDra(byPods, dra);
      if (used.status() == NodeUsage.Status.USAGE_UNKNOWN
          && byPods.status() != NodeUsage.Status.USAGE_UNKNOWN) {
        findings.add(
            finding(
                AU05,
                "dra-allocation-unresolved",
                "Node " + base.name(),
                "ResourceClaims",
                used.unavailableReason().orElse("a DRA allocation cannot be resolved")
                    + ": the node's usage is unknown",
                "Check the DRA driver's ResourceSlices on this node (the device and its uuid"
                    + " attribute) and the node's HAMi registration."));
      }
      cards += used.devices().size();
      for (int i = 0; i < used.devices().size(); i++) {
        DeviceUsage d = used.devices().get(i);
        DeviceUsage p = byPods.devices().get(byPods.positionOf(d.id()));
        List<String> over = d.overCommit();
        if (!over.isEmpty()) {
          String byDra = draShare(d, p);
          long holders =
              pods.stream()
                  .filter(u -> u.devices().stream().anyMatch(x -> x.uuid().equals(d.id())))
                  .count();
          findings.add(
              finding(
                  AU01,
                  "card-over-committed",
                  "Node " + base.name(),
                  "card " + d.id(),
                  String.join(", ", over) + " by " + users(d.id(), pods) + byDra,
                  holders > 1 || !byDra.isEmpty()
                      ? "Delete one of these pods; find which bind lost its node lock"
                          + " (hami-lock-doctor locks, the binders' logs)."
                      : "Recreate this pod: its own containers share the card at once with an"
                          + " exclusive one (a scheduler that counts native sidecars as init"
                          + " containers placed them; HAMi's Fit refuses it)."));
        }
      }
    }
    findings.sort(Comparator.comparing(Finding::checkId)); // stable: cluster order within an id
    return new DoctorReport(
        "audit",
        List.of(),
        Optional.empty(),
        Optional.empty(),
        findings,
        concat(
            notes,
            "audited "
                + registered.size()
                + " node(s), "
                + cards
                + " card(s), "
                + allocated
                + " pod(s) with a HAMi allocation of "
                + podObjects.size()
                + " pod(s)"
                + (dra == DraObjects.NONE
                    ? ""
                    : ", "
                        + dra.claims().stream().filter(ResourceClaimView::allocated).count()
                        + " allocated ResourceClaim(s) on "
                        + dra.slices().size()
                        + " ResourceSlice(s)")),
        unreadable);
  }

  private static List<String> concat(List<String> notes, String last) {
    List<String> out = new ArrayList<>(notes);
    out.add(last);
    return out;
  }

  /** What DRA allocations add to the card, e.g. {@code , DRA claims (8192 MiB, 34 %, 1 slot)}. */
  static String draShare(DeviceUsage withDra, DeviceUsage byPods) {
    int slots = withDra.used() - byPods.used();
    if (slots == 0 && withDra.usedmem() == byPods.usedmem()) {
      return "";
    }
    return ", DRA claims "
        + share(
            withDra.usedmem() - byPods.usedmem(), withDra.usedcores() - byPods.usedcores(), slots);
  }

  /** {@return {@code (8192 MiB, 34 %, 1 slot)}} */
  private static String share(long mem, long cores, int slots) {
    return "(" + mem + " MiB, " + cores + " %, " + slots + (slots == 1 ? " slot)" : " slots)");
  }

  /**
   * The {@code resource.k8s.io/v1} ResourceSlices and ResourceClaims (all namespaces) as {@link
   * DraObjects}, so DRA allocations count as usage (issue 28). {@link DraObjects#NONE} with no note
   * when the server does not serve them (404, a cluster without DRA); with a note when they cannot
   * be read (e.g. 403) or only one of the two LISTs answers 404; an object the device layer cannot
   * read is an AU05 finding and left out (its node's usage is then under-counted by it, which the
   * finding says).
   */
  static DraObjects dra(Cluster cluster, List<Finding> findings, List<String> notes) {
    List<JsonNode> slices;
    List<JsonNode> claims;
    try {
      Optional<List<JsonNode>> s = cluster.list(RESOURCE_SLICES, Optional.empty());
      Optional<List<JsonNode>> c = cluster.list(RESOURCE_CLAIMS, Optional.empty());
      if (s.isEmpty() != c.isEmpty()) { // one served: not a cluster without DRA
        notes.add(
            "DRA usage not counted: LIST "
                + (s.isEmpty() ? "resourceslices" : "resourceclaims")
                + " answered 404 while the other was served");
        return DraObjects.NONE;
      }
      if (s.isEmpty()) {
        return DraObjects.NONE;
      }
      slices = s.get();
      claims = c.get();
    } catch (ClusterReadException e) {
      notes.add("DRA usage not counted: " + e.getMessage());
      return DraObjects.NONE;
    }
    List<ResourceSliceView> sliceViews = new ArrayList<>();
    for (JsonNode o : slices) {
      try {
        sliceViews.add(JsonViews.resourceSliceView(o));
      } catch (MalformedObjectException e) {
        findings.add(draUnreadable("ResourceSlice " + Json.name(o), e));
      }
    }
    List<ResourceClaimView> claimViews = new ArrayList<>();
    for (JsonNode o : claims) {
      try {
        claimViews.add(JsonViews.resourceClaimView(o));
      } catch (MalformedObjectException e) {
        findings.add(draUnreadable("ResourceClaim " + Json.key(o), e));
      }
    }
    return new DraObjects(sliceViews, claimViews);
  }

  /**
   * {@link #AU06}: a card a node registers for HAMi that a DRA driver's ResourceSlice on the same
   * node also publishes (its UUID attribute, or parent UUID of a partition, per the vendors' {@link
   * DraDriver}s): kube-scheduler's DRA allocator does not see HAMi's allocations, so it can hand
   * the card out again (issue 28; HAMi's documentation: extender mode and DRA mode not both).
   */
  private void sharedCards(
      Map<String, NodeUsage> registered, DraObjects dra, List<Finding> findings) {
    Map<String, DraDriver> drivers = new HashMap<>();
    registry.vendors().forEach(v -> v.draDrivers().forEach(d -> drivers.put(d.driver(), d)));
    for (ResourceSliceView s : dra.slices()) {
      DraDriver d = drivers.get(s.driver());
      NodeUsage base = registered.get(s.nodeName().isEmpty() ? s.pool() : s.nodeName());
      if (d == null || base == null) {
        continue;
      }
      for (ResourceSliceView.Device dev : s.devices()) {
        String uuid =
            d.parentUuidAttribute()
                .map(a -> d.value(dev.attributes(), a))
                .orElseGet(() -> d.value(dev.attributes(), d.uuidAttribute()));
        if (uuid != null && base.positionOf(uuid) >= 0) {
          findings.add(
              finding(
                  AU06,
                  "card-in-hami-and-dra",
                  Severity.WARNING,
                  "Node " + base.name(),
                  "card " + uuid,
                  "registered for HAMi and published by DRA driver "
                      + s.driver()
                      + " as device "
                      + dev.name()
                      + " (ResourceSlice "
                      + s.name()
                      + "): kube-scheduler's DRA allocator does not see HAMi's allocations and"
                      + " can allocate the card again",
                  "Run one of HAMi's device plugin and the DRA driver on this node (HAMi: extender"
                      + " and DRA mode must not both be enabled), or taint the DRA devices"
                      + " (DeviceTaintRule)."));
        }
      }
    }
  }

  /**
   * {@link #AU08}: a DeviceClass whose {@code spec.extendedResourceName} is a vendor's count
   * resource. Nodes advertising it (HAMi's device plugin): kube-scheduler gives the request to DRA
   * on every node whose allocatable is 0 ({@code extendeddynamicresources.go}
   * filterExtendedResources, Kubernetes v1.37), bypassing the device plugin and the node lock; of
   * several classes it uses the newest, the lower name on a tie ({@code extendedresourcecache}).
   * Either way the same Filter rejects a pod also asking for a resource no node lists and no class
   * maps (HAMi's {@code gpumem}, {@code gpucores}) on every node: {@code
   * device-class-rejects-hami-pods}. Silent where {@code resource.k8s.io/v1} is not served.
   */
  private void mappedCountResources(
      List<JsonNode> nodes, List<Finding> findings, List<String> notes) {
    List<JsonNode> classes;
    try {
      classes = cluster.list(DEVICE_CLASSES, Optional.empty()).orElse(List.of());
    } catch (ClusterReadException e) {
      notes.add("DeviceClasses not checked: " + e.getMessage());
      return;
    }
    for (DeviceVendor v : registry.vendors()) {
      String count = registry.config(v.commonWord()).resourceNames().count();
      List<String> mapping =
          classes.stream()
              .filter(c -> count.equals(c.path("spec").path("extendedResourceName").asText()))
              .sorted(
                  Comparator.comparing(
                          (JsonNode c) -> c.path("metadata").path("creationTimestamp").asText())
                      .reversed()
                      .thenComparing(Json::name))
              .map(Json::name)
              .toList();
      if (mapping.isEmpty()) {
        continue;
      }
      List<String> unlisted =
          registry.config(v.commonWord()).resourceNames().all().stream()
              .filter(r -> !r.equals(count))
              .filter(
                  r ->
                      nodes.stream()
                          .allMatch(
                              n -> n.path("status").path("allocatable").path(r).isMissingNode()))
              .filter(
                  r ->
                      classes.stream()
                          .noneMatch(
                              c -> r.equals(c.path("spec").path("extendedResourceName").asText())))
              .toList();
      if (!unlisted.isEmpty()) {
        findings.add(
            finding(
                AU08,
                "device-class-rejects-hami-pods",
                Severity.WARNING,
                "DeviceClass " + mapping.get(0),
                "spec.extendedResourceName",
                "maps "
                    + count
                    + " to DRA, so kube-scheduler's DynamicResources Filter rejects on every node"
                    + " each pod asking for "
                    + count
                    + " together with "
                    + String.join(" or ", unlisted)
                    + ", which no node's allocatable lists and no DeviceClass maps (\"cannot fit"
                    + " resource\", filterExtendedResources): HAMi's vGPU pods stay Pending",
                "Remove spec.extendedResourceName from the DeviceClass while HAMi's scheduler"
                    + " serves "
                    + count
                    + " with "
                    + String.join(", ", unlisted)
                    + "."));
      }
      List<String> advertising = new ArrayList<>();
      List<String> toDra = new ArrayList<>();
      for (JsonNode n : nodes) {
        String capacity = n.path("status").path("capacity").path(count).asText("0");
        String allocatable = n.path("status").path("allocatable").path(count).asText("0");
        if (capacity.equals("0")) {
          continue;
        }
        advertising.add(Json.name(n));
        if (allocatable.equals("0")) {
          toDra.add(Json.name(n) + " (capacity " + capacity + ", allocatable 0)");
        }
      }
      if (advertising.isEmpty()) {
        continue;
      }
      findings.add(
          finding(
              AU08,
              "device-class-maps-hami-resource",
              Severity.WARNING,
              "DeviceClass " + mapping.get(0),
              "spec.extendedResourceName",
              "maps "
                  + count
                  + " to DRA while node(s) "
                  + String.join(", ", advertising)
                  + " advertise it through the device plugin: kube-scheduler allocates "
                  + count
                  + " through a ResourceClaim on every node whose allocatable is 0"
                  + (toDra.isEmpty() ? "" : " (now: " + String.join(", ", toDra) + ")")
                  + ", where the pod bypasses HAMi's device plugin and the node lock"
                  + (mapping.size() == 1
                      ? ""
                      : "; also mapped by DeviceClass(es) "
                          + String.join(", ", mapping.subList(1, mapping.size()))
                          + ", kube-scheduler uses only the newest, "
                          + mapping.get(0)),
              "While HAMi's device plugin serves "
                  + count
                  + ", remove spec.extendedResourceName from the DeviceClass (HAMi: extender and"
                  + " DRA mode must not both be enabled), or move every node to the DRA driver."));
    }
  }

  private static Finding draUnreadable(String source, MalformedObjectException e) {
    return finding(
        AU05,
        "dra-object-unreadable",
        source,
        "",
        "the device layer cannot read this object ("
            + e.getMessage()
            + "): the devices it allocates or publishes are not counted",
        "");
  }

  /**
   * Each pod using the card with its collapsed share, once (a card its exclusive container shares
   * is two of its entries): {@code ns/a (10000 MiB, 30 %, 1 slot)}.
   */
  private static String users(String uuid, List<PodUsage> pods) {
    List<String> out = new ArrayList<>();
    for (PodUsage p : pods) {
      long mem = 0;
      long cores = 0;
      int slots = 0;
      for (ContainerDevice d : p.devices()) {
        if (d.uuid().equals(uuid)) {
          mem += d.usedmem();
          cores += d.usedcores();
          slots += d.slots();
        }
      }
      if (slots > 0) {
        out.add(p.podKey() + " " + share(mem, cores, slots));
      }
    }
    return String.join(", ", out);
  }

  /**
   * The first vendor count resource (e.g. {@code nvidia.com/gpu}) a container of the pod — regular,
   * init or sidecar — asks for a positive amount of (limit, else request, as Kubernetes).
   */
  private Optional<String> askedCount(PodView pod) {
    List<ContainerView> all = new ArrayList<>(pod.initContainers());
    all.addAll(pod.containers());
    for (DeviceVendor v : registry.vendors()) {
      String count = registry.config(v.commonWord()).resourceNames().count();
      for (ContainerView c :
          registry.viaDra(pod, v.commonWord()) ? List.<ContainerView>of() : all) {
        if (c.limitOrRequest(count).filter(q -> q.compareTo(BigDecimal.ZERO) > 0).isPresent()) {
          return Optional.of(count);
        }
      }
    }
    return Optional.empty();
  }

  private List<JsonNode> listAll(Cluster.Resource r, List<ClusterReadException> unreadable) {
    try {
      Optional<List<JsonNode>> l = cluster.list(r, Optional.empty());
      if (l.isPresent()) {
        return l.get();
      }
      unreadable.add(
          new ClusterReadException(
              r.listing(Optional.empty()),
              404,
              "not served by this API server",
              Optional.empty(),
              null));
    } catch (ClusterReadException e) {
      unreadable.add(e);
    }
    return List.of();
  }

  private static Finding finding(
      String id, String name, String source, String path, String message, String fix) {
    return finding(id, name, Severity.ERROR, source, path, message, fix);
  }

  static Finding finding(
      String id,
      String name,
      Severity severity,
      String source,
      String path,
      String message,
      String fix) {
    return new Finding(
        id, name, severity, new Location(source, 0, path, OptionalInt.empty()), message, fix);
  }
}
