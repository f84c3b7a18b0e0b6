package dev.hamilock.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.core.GangMembership;
import dev.hamilock.core.GoDuration;
import dev.hamilock.core.InvalidGoDurationException;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.store.LockJudgement;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import dev.hamilock.preflight.Preflight;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.SchedulerDeployment;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code hami-lock doctor} as a Java API: the guide's troubleshooting answered from a live cluster,
 * and a safe way to inspect and clear node locks. Every judgement is the library's ({@link
 * LockRecordCodec}, {@link LockJudgement}, {@link PodOwnerLiveness}, {@link UsageReconstructor},
 * {@link Preflight#standard()} with its finding ids). Reads only, except {@link #unlock}; a refused
 * read is reported in {@link DoctorReport#unreadable()} (exit status 2), never thrown.
 *
 * <p>One-shot observer: a value's "first seen" is its own timestamp, so it is expired when older
 * than the lock timeout (HAMi's rule); a running hami-lock also waits one timeout after first
 * seeing it (clock-skew rule), so it may take a lock over later than the doctor says.
 */
public final class Doctor {

  /** Finding id: a Pending pod whose bind failed on a held node lock (guide symptom 1). */
  public static final String DR01 = "DR01";

  /** Finding id: the scheduler crash-loops (guide symptom 2). */
  public static final String DR02 = "DR02";

  /** Finding id: members of a PodGroup stay Pending (guide symptom 3). */
  public static final String DR03 = "DR03";

  /**
   * Finding id: a container fails with the musl / {@code libdl.so.2} signature (guide symptom 4).
   */
  public static final String DR04 = "DR04";

  /** Finding id: a node lock that is stuck, malformed, dangling, expired or legacy. */
  public static final String DR05 = "DR05";

  /**
   * Finding id: {@code unlock} refused (no lock, another holder, changed meanwhile, held by a live
   * holder without {@code --force}), or forced (WARNING).
   */
  public static final String DR06 = "DR06";

  /**
   * Finding id: pods name PodGroups but the API server does not serve {@code
   * podgroups.scheduling.x-k8s.io}.
   */
  public static final String DR07 = "DR07";

  /**
   * Text of HAMi's lock-contention bind error ({@code node %s has been locked within %v}) and of
   * hami-lock's wait timeout.
   */
  static final List<String> LOCK_SIGNATURES = List.of("has been locked within", "to be unlocked");

  private static final Pattern LOCKED_NODE =
      Pattern.compile("node ([^\\s:]+) has been locked|node ([^\\s:]*) to be unlocked");

  static final String LIBDL = "libdl.so.2";
  static final String QUEUE_SORT = "only one queue sort plugin";

  private final ApiClient client;
  private final Cluster cluster;
  private final Optional<String> namespace;
  private final InstantSource clock;
  private final Duration lockTimeout;
  private final VendorRegistry registry;
  private final Optional<String> schedulerAccount;

  private Doctor(Builder b) {
    this.client = b.client;
    this.cluster = new Cluster(b.client, b.local);
    this.namespace = b.namespace;
    this.clock = b.clock != null ? b.clock : cluster.serverClock();
    this.lockTimeout = b.lockTimeout;
    this.registry = b.registry;
    this.schedulerAccount = b.schedulerAccount;
  }

  /**
   * @param client the API client (base path and credentials, e.g. from a kubeconfig)
   * @return a builder: all namespaces, the API server's clock (this machine's, corrected by the
   *     {@code Date} header of the server's answers), the lock timeout from {@code
   *     HAMI_NODELOCK_EXPIRE} or 5 min, the vendors found by ServiceLoader
   */
  public static Builder builder(ApiClient client) {
    return new Builder(Objects.requireNonNull(client, "client"));
  }

  /**
   * @return the lock keys the doctor reads: HAMi's {@code hami.io/mutex.lock} and every vendor's,
   *     sorted
   */
  public List<String> lockKeys() {
    Set<String> keys = new TreeSet<>();
    keys.add(NodeLock.DEFAULT_KEY);
    for (DeviceVendor v : registry.vendors()) {
      v.nodeLockKey().ifPresent(keys::add);
    }
    return List.copyOf(keys);
  }

  // ------------------------------------------------------------------------------- locks

  /**
   * {@code locks}: every node's lock annotations judged, with the HAMi registration summary. DR05:
   * stuck-allocating, malformed and dra-route (the holder's devices went through DRA, so its device
   * plugin never releases the lock, issue 28) ERROR; dangling and expired WARNING; legacy INFO.
   *
   * @return the report
   */
  public DoctorReport locks() {
    Reads r = new Reads();
    List<NodeEntry> nodes = new ArrayList<>();
    List<Finding> findings = new ArrayList<>();
    Optional<List<JsonNode>> nodeObjects = r.list(Cluster.NODES, Optional.empty());
    Optional<List<JsonNode>> pods = r.list(Cluster.PODS, Optional.empty());
    if (nodeObjects.isPresent()) {
      DraObjects dra = Audit.dra(cluster, findings, r.notes);
      nodes.addAll(nodeEntries(nodeObjects.get(), pods.orElse(List.of()), dra, r));
      findings.addAll(lockFindings(nodes));
    }
    return new DoctorReport(
        "locks", nodes, Optional.empty(), Optional.empty(), findings, r.notes, r.unreadable);
  }

  private List<NodeEntry> nodeEntries(
      List<JsonNode> nodeObjects, List<JsonNode> podObjects, DraObjects dra, Reads r) {
    List<PodView> pods = new ArrayList<>();
    for (JsonNode p : podObjects) {
      try {
        pods.add(JsonViews.podView(p));
      } catch (MalformedObjectException e) {
        r.notes.add("pod " + Json.key(p) + " skipped in usage: " + e.getMessage());
      }
    }
    List<NodeView> views = new ArrayList<>();
    for (JsonNode n : nodeObjects) {
      try {
        views.add(JsonViews.nodeView(n));
      } catch (MalformedObjectException e) {
        r.notes.add("node " + Json.name(n) + " skipped: " + e.getMessage());
      }
    }
    Map<String, NodeUsage> usage;
    UsageReconstructor reconstructor = new UsageReconstructor(registry);
    try {
      usage = reconstructor.clusterUsage(views, pods);
    } catch (RuntimeException e) {
      usage = Map.of();
      r.notes.add("usage reconstruction failed: " + e);
    }
    PodOwnerLiveness liveness = PodOwnerLiveness.create(client, Duration.ofSeconds(10), 2);
    List<NodeEntry> out = new ArrayList<>();
    for (NodeView v : views) {
      NodeUsage byPods = usage.get(v.name());
      NodeUsage u = byPods == null ? null : reconstructor.plusDra(byPods, dra);
      List<String> draShares = new ArrayList<>();
      int gpus = 0;
      long usedMem = 0;
      long totalMem = 0;
      long usedCores = 0;
      long totalCores = 0;
      Optional<String> problem = Optional.empty();
      if (u != null) {
        for (DeviceUsage d : u.devices()) {
          gpus++;
          usedMem += d.usedmem();
          totalMem += d.totalmem();
          usedCores += d.usedcores();
          totalCores += d.totalcore();
          String share = Audit.draShare(d, byPods.devices().get(byPods.positionOf(d.id())));
          if (!share.isEmpty()) {
            draShares.add(d.id() + share);
          }
        }
        List<String> problems = new ArrayList<>();
        u.registrationErrors().forEach((k, e) -> problems.add(k + ": " + e));
        u.unavailableReason().ifPresent(problems::add);
        problem = problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
      }
      List<LockEntry> locks = new ArrayList<>();
      for (String key : lockKeys()) {
        String value = v.annotations().get(key);
        if (value != null) {
          judge(v.name(), key, value, liveness, r)
              .map(l -> draRoute(l, pods))
              .ifPresent(locks::add);
        }
      }
      out.add(
          new NodeEntry(
              v.name(), gpus, usedMem, totalMem, usedCores, totalCores, problem, draShares, locks));
    }
    return out;
  }

  /**
   * {@code l} as {@link LockState#DRA_ROUTE} when it is held or stuck-allocating, its key is not
   * one the holder's bind needs ({@link VendorRegistry#lockKeys}, the bind's own rule) and a vendor
   * locking with that key went the DRA route for the holder; else {@code l}.
   */
  private LockEntry draRoute(LockEntry l, List<PodView> pods) {
    if (l.state() != LockState.HELD && l.state() != LockState.STUCK_ALLOCATING) {
      return l;
    }
    PodView holder =
        pods.stream().filter(p -> l.holder().equals(Optional.of(p.key()))).findFirst().orElse(null);
    if (holder == null || registry.lockKeys(holder).contains(l.key())) {
      return l;
    }
    List<String> via = new ArrayList<>();
    for (DeviceVendor v : registry.vendors()) {
      if (v.nodeLockKey().equals(Optional.of(l.key())) && registry.viaDra(holder, v.commonWord())) {
        via.add(registry.config(v.commonWord()).resourceNames().count());
      }
    }
    if (via.isEmpty()) {
      return l;
    }
    String detail =
        l.detail()
            + "; kube-scheduler gave its "
            + String.join(", ", via)
            + " through DRA (status.extendedResourceClaimStatus): kubelet never calls the device"
            + " plugin's Allocate for it, so nothing releases this lock and it blocks GPU binds on "
            + l.node()
            + (l.state() == LockState.STUCK_ALLOCATING
                ? " until the holder runs (hami-lock keeps a stuck-allocating lock, HAMi#3096)"
                : " until it expires");
    return new LockEntry(
        l.node(), l.key(), l.value(), LockState.DRA_ROUTE, l.holder(), l.age(), detail);
  }

  private Optional<LockEntry> judge(
      String node, String key, String value, OwnerLiveness liveness, Reads r) {
    Instant now = clock.instant();
    LockRecord record;
    try {
      record = LockRecordCodec.parse(value);
    } catch (MalformedLockException e) {
      return Optional.of(
          new LockEntry(
              node,
              key,
              value,
              LockState.MALFORMED,
              Optional.empty(),
              Optional.empty(),
              "not <RFC3339>,<namespace>,<pod> ("
                  + e.getMessage()
                  + "): HAMi never takes it over (the node"
                  + " accepts no GPU bind); hami-lock takes it over one lock timeout after a process first sees it."
                  + " Remove it: kubectl annotate node "
                  + node
                  + " "
                  + key
                  + "-"));
    }
    Instant firstSeen = record.acquiredAt().isAfter(now) ? now : record.acquiredAt();
    if (record.owner().isEmpty()) {
      LockJudgement.Result j =
          LockJudgement.judge(
              node, Optional.of(record), Optional.empty(), now, firstSeen, lockTimeout);
      return Optional.of(
          new LockEntry(
              node,
              key,
              value,
              LockState.LEGACY,
              Optional.empty(),
              j.stampAge(),
              "legacy value without owner (older HAMi): "
                  + (j.decision() == LockJudgement.Decision.EXPIRED
                      ? "expired, the next bind takes it over"
                      : "held until it is " + GoDuration.format(lockTimeout) + " old")));
    }
    LockOwner owner = record.owner().get();
    String who = owner.namespace() + "/" + owner.name();
    OwnerLiveness.HolderStatus status;
    try {
      status = liveness.status(owner);
    } catch (LockBackendException e) {
      r.unreadable.add(
          fromBackend(
              "get pod " + who + " (holder of " + key + " on node " + node + ")",
              e,
              "get on pods"));
      return Optional.empty();
    }
    LockJudgement.Result j =
        LockJudgement.judge(
            node, Optional.of(record), Optional.of(status), now, firstSeen, lockTimeout);
    String age = j.stampAge().map(LockJudgement::formatAge).orElse("?");
    String podState =
        status
                .phase()
                .map(p -> p.name().charAt(0) + p.name().substring(1).toLowerCase(Locale.ROOT))
                .orElse("?")
            + ", bind-phase "
            + status.bindPhase().map(OwnerLiveness.BindPhase::wireValue).orElse("absent")
            + status
                .nodeName()
                .map(n -> n.equals(node) ? ", bound here" : ", bound to " + n)
                .orElse(", unbound");
    String overdue =
        "held "
            + age
            + " (> lock timeout "
            + GoDuration.format(lockTimeout)
            + ") by "
            + who
            + " ("
            + podState
            + "): ";
    LockState state;
    String detail;
    switch (j.decision()) {
      case DANGLING -> {
        state = LockState.DANGLING;
        detail =
            "holder "
                + who
                + " is "
                + status.state().name().toLowerCase(Locale.ROOT).replace('_', ' ')
                + ": the next bind takes it over (HAMi only when the pod is not found)";
      }
      case STUCK_ALLOCATING -> {
        state = LockState.STUCK_ALLOCATING;
        detail =
            overdue
                + "the device plugin on "
                + node
                + " has not finished Allocate for it; hami-lock keeps the lock"
                + " (HAMi#3096: a late Allocate would get the next pod's devices). Check the device plugin's log on "
                + node
                + "; then delete pod "
                + who
                + " (or set its hami.io/bind-phase to failed if the plugin"
                + " will never serve it)";
      }
      case EXPIRED -> {
        state = LockState.EXPIRED;
        detail = overdue + "the next bind takes it over";
      }
      default -> {
        state = LockState.HELD;
        detail = "held " + age + " by " + who + " (" + podState + ")";
      }
    }
    return Optional.of(
        new LockEntry(node, key, value, state, Optional.of(who), j.stampAge(), detail));
  }

  private static List<Finding> lockFindings(List<NodeEntry> nodes) {
    List<Finding> out = new ArrayList<>();
    for (NodeEntry n : nodes) {
      for (LockEntry l : n.locks()) {
        Severity s =
            switch (l.state()) {
              case STUCK_ALLOCATING, MALFORMED, DRA_ROUTE -> Severity.ERROR;
              case DANGLING, EXPIRED -> Severity.WARNING;
              case LEGACY -> Severity.INFO;
              case HELD -> null;
            };
        if (s == null) {
          continue;
        }
        String fix =
            switch (l.state()) {
              case STUCK_ALLOCATING ->
                  "Fix the device plugin on "
                      + n.node()
                      + ", then delete pod "
                      + l.holder().orElse("?")
                      + "; or, once the plugin is known not to serve it: "
                      + unlockCommand(n, l);
              case MALFORMED -> "kubectl annotate node " + n.node() + " " + l.key() + "-";
              case DRA_ROUTE ->
                  "No device plugin will serve "
                      + l.holder().orElse("?")
                      + ", so removing the lock risks nothing it guards: "
                      + unlockCommand(n, l)
                      + " (no --force needed). Then find the scheduler that locked for it: hami-lock's binder"
                      + " takes no lock for a DRA-route pod; HAMi's Bind does";
              case LEGACY ->
                  "Nothing to do if an older HAMi still runs (it expires after the lock timeout); a legacy"
                      + " value names no holder, so unlock cannot check one: kubectl annotate node "
                      + n.node()
                      + " "
                      + l.key()
                      + "- once no bind is in flight";
              default ->
                  "Nothing to do: the next bind takes it over; to free it now: "
                      + unlockCommand(n, l);
            };
        out.add(
            Audit.finding(
                DR05,
                "node-lock-" + l.state().word(),
                s,
                "Node " + n.node(),
                "metadata.annotations[\"" + l.key() + "\"]",
                "lock "
                    + l.key()
                    + "=\""
                    + l.value()
                    + "\" is "
                    + l.state().word()
                    + ": "
                    + l.detail(),
                fix));
      }
    }
    return out;
  }

  /** Stuck-allocating and dra-route entries always name their holder. */
  private static String unlockCommand(NodeEntry n, LockEntry l) {
    return "hami-lock-doctor unlock "
        + n.node()
        + " --key "
        + l.key()
        + l.holder().map(h -> " --holder " + h).orElse("");
  }

  // ------------------------------------------------------------------------------ unlock

  /**
   * {@code unlock NODE [--key K] --holder NS/POD [--dry-run] [--force]}: one compare-and-delete
   * ({@link dev.hamilock.core.store.LockStore#deleteIfEquals}) of exactly the value just read and
   * judged (a re-stamp in between, {@link NodeLock#stillHeld}, is left in place), and without
   * {@code force} only if {@code locks} would not judge it {@code held} or it is {@link
   * LockState#DRA_ROUTE}. Removing a held lock risks what it prevents (issue 23): HAMi's device
   * plugin finds the pod it serves from the lock value, and a Binding in flight cannot be made
   * conditional on the lock. Refusals are {@code DR06} ERROR findings (nothing changed); a forced
   * release of a held lock adds a {@code DR06} WARNING.
   *
   * @param node the node
   * @param key the lock key; empty for {@code hami.io/mutex.lock}
   * @param holder the holder the operator expects
   * @param dryRun only say what would be done
   * @param force release a lock judged {@code held} too
   * @return the report; {@link DoctorReport#action()} says what was (or would be) done
   */
  public DoctorReport unlock(
      String node, Optional<String> key, LockOwner holder, boolean dryRun, boolean force) {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(holder, "holder");
    String k = key.orElse(NodeLock.DEFAULT_KEY);
    String who = holder.namespace() + "/" + holder.name();
    Location where =
        new Location("Node " + node, 0, "metadata.annotations[\"" + k + "\"]", OptionalInt.empty());
    List<Finding> findings = new ArrayList<>();
    List<ClusterReadException> unreadable = new ArrayList<>();
    Optional<String> action = Optional.empty();
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(client).key(k).watch(false).lockTimeout(lockTimeout).build()) {
      NodeLock lock = locks.nodeLock();
      // read through the doctor's own reads: the answer's Date header sets the server clock the
      // lock is judged by
      Optional<JsonNode> read;
      try {
        read = cluster.get(Cluster.NODES, Optional.empty(), node);
      } catch (ClusterReadException e) {
        unreadable.add(e);
        return unlockReport(action, findings, unreadable);
      }
      if (read.isEmpty()) {
        findings.add(
            refused(
                where,
                "node " + node + " does not exist",
                "Check the node name: kubectl get nodes"));
        return unlockReport(action, findings, unreadable);
      }
      Optional<String> value = Json.string(Json.object(read.get(), "metadata", "annotations"), k);
      if (value.isEmpty()) {
        findings.add(
            refused(
                where,
                "node " + node + " has no lock " + k + ": nothing to release",
                "Run hami-lock-doctor locks to see the locks and their keys."));
        return unlockReport(action, findings, unreadable);
      }
      String lockOnNode = "lock " + k + "=\"" + value.get() + "\" on node " + node;
      Optional<String> current = ownerText(value.get());
      if (!current.equals(Optional.of(who))) {
        findings.add(
            refused(
                where,
                lockOnNode
                    + " is held by "
                    + current.orElse("no parsable owner")
                    + ", not "
                    + who
                    + ": refused, nothing changed",
                "Re-read with hami-lock-doctor locks and name the current holder, if it still should go."));
        return unlockReport(action, findings, unreadable);
      }
      Reads r = new Reads();
      Optional<LockEntry> judged =
          judge(
              node, k, value.get(), PodOwnerLiveness.create(client, Duration.ofSeconds(10), 2), r);
      if (judged.isEmpty()) {
        return unlockReport(action, findings, r.unreadable);
      }
      LockEntry entry = judged.get();
      if (entry.state() == LockState.HELD) {
        try {
          entry = draRoute(entry, holderPod(holder));
        } catch (ClusterReadException e) {
          unreadable.add(e);
          return unlockReport(action, findings, unreadable);
        }
      }
      // a DRA-route holder's lock needs no --force: no Allocate will ever release it (issue 28)
      String dra = entry.state() == LockState.DRA_ROUTE ? ": " + entry.detail() : "";
      if (entry.state() == LockState.HELD) {
        String risk =
            lockOnNode
                + " is "
                + judged.get().detail()
                + ", within the lock timeout "
                + GoDuration.format(lockTimeout)
                + ". Removing it risks the device plugin serving the wrong pod (HAMi's plugin finds"
                + " the pod to serve from this value; once another pod takes the free lock, "
                + who
                + "'s Allocate can get that pod's devices) and a bind in flight binding "
                + who
                + " onto a card another pod then gets (a Binding cannot be made conditional on the lock)";
        if (!force) {
          findings.add(
              refused(
                  where,
                  risk + ": refused, nothing changed",
                  "Wait for the device plugin to release it, or for it to expire; add --force only if "
                      + who
                      + " is neither being bound nor allocated."));
          return unlockReport(action, findings, unreadable);
        }
        findings.add(
            new Finding(
                DR06,
                "unlock-forced",
                Severity.WARNING,
                where,
                risk
                    + (dryRun
                        ? ": --force given, so it would be forced (--dry-run: nothing changed)"
                        : ": --force given, so it was forced"),
                (dryRun ? "If run without --dry-run, check that pod " : "Check that pod ")
                    + who
                    + " and the next pod on "
                    + node
                    + " got distinct devices."));
      }
      if (dryRun) {
        action =
            Optional.of(
                "would release "
                    + lockOnNode
                    + " held by "
                    + who
                    + dra
                    + " (one compare-and-delete of exactly this value; --dry-run: nothing changed)");
        return unlockReport(action, findings, unreadable);
      }
      boolean released;
      try {
        released = locks.store().deleteIfEquals(node, k, value.get());
      } catch (LockBackendException e) {
        unreadable.add(
            fromBackend("patch node " + node + " (release lock " + k + ")", e, "patch on nodes"));
        return unlockReport(action, findings, unreadable);
      }
      if (released) {
        action = Optional.of("released " + lockOnNode + " held by " + who + dra);
      } else {
        String now;
        try {
          now =
              lock.readValue(node)
                  .map(v -> "\"" + v + "\" (" + ownerText(v).orElse("no parsable owner") + ")")
                  .orElse("free");
        } catch (LockBackendException e) {
          now = "unknown (" + e.getMessage() + ")";
        }
        findings.add(
            refused(
                where,
                "lock "
                    + k
                    + " on node "
                    + node
                    + " changed between read and release (read \""
                    + value.get()
                    + "\", now "
                    + now
                    + "): it is no longer held by "
                    + who
                    + "; refused, nothing changed",
                "Re-read with hami-lock-doctor locks; another pod holds the node now."));
      }
    }
    return unlockReport(action, findings, unreadable);
  }

  private static DoctorReport unlockReport(
      Optional<String> action, List<Finding> findings, List<ClusterReadException> unreadable) {
    return new DoctorReport(
        "unlock", List.of(), Optional.empty(), action, findings, List.of(), unreadable);
  }

  /** The holder pod as a view (one GET); empty when it is gone or unreadable as a pod. */
  private List<PodView> holderPod(LockOwner holder) throws ClusterReadException {
    Optional<JsonNode> p =
        cluster.get(Cluster.PODS, Optional.of(holder.namespace()), holder.name());
    try {
      return p.isEmpty() ? List.of() : List.of(JsonViews.podView(p.get()));
    } catch (MalformedObjectException e) {
      return List.of();
    }
  }

  private static Finding refused(Location where, String message, String fix) {
    return new Finding(DR06, "unlock-refused", Severity.ERROR, where, message, fix);
  }

  private static Optional<String> ownerText(String value) {
    try {
      return LockRecordCodec.parse(value).owner().map(o -> o.namespace() + "/" + o.name());
    } catch (MalformedLockException e) {
      return Optional.empty();
    }
  }

  // -------------------------------------------------------------------------------- gang

  /**
   * {@code gang NS/PODGROUP}: members (by label, {@code spec.schedulingGroup} and the annotation
   * mistake), minMember, phases, conditions, latest events, a SubjectAccessReview of the
   * scheduler's PodGroup access (PF04), bind-phase and locks. Findings: preflight's over the group
   * and its pods, PF04, DR01/DR03.
   *
   * @param ns the namespace
   * @param name the PodGroup
   * @return the report
   */
  public DoctorReport gang(String ns, String name) {
    Reads r = new Reads();
    List<Finding> findings = new ArrayList<>();
    Optional<JsonNode> group = r.get(Cluster.PODGROUPS, Optional.of(ns), name);
    Optional<List<JsonNode>> pods = r.list(Cluster.PODS, Optional.of(ns));
    Optional<List<JsonNode>> events =
        r.listOptional(Cluster.EVENTS, Optional.of(ns), "events (latest scheduling events)");
    Optional<List<JsonNode>> nodes = r.list(Cluster.NODES, Optional.empty());
    Scheduler sched = scheduler(r);
    List<JsonNode> related = new ArrayList<>();
    List<GangEntry.Member> members = new ArrayList<>();
    Map<String, String> holds = lockHolders(nodes.orElse(List.of()));
    for (JsonNode p : pods.orElse(List.of())) {
      Map<String, String> labels = Json.labels(p);
      Optional<String> sg = Json.string(Json.object(p, "spec", "schedulingGroup"), "podGroupName");
      String via;
      if (name.equals(labels.get(GangMembership.POD_GROUP_LABEL))) {
        via = "label";
      } else if (sg.filter(name::equals).isPresent()) {
        via = "schedulingGroup";
      } else if (name.equals(Json.annotations(p).get(GangMembership.POD_GROUP_LABEL))) {
        via = "annotation";
      } else {
        continue;
      }
      related.add(p);
      members.add(member(p, via, events.orElse(List.of()), holds));
    }
    int minMember = 0;
    String phase = "";
    if (group.isPresent()) {
      JsonNode spec = Json.object(group.get(), "spec");
      minMember =
          intValue(spec.get("minMember"))
              .orElse(
                  intValue(Json.object(spec, "schedulingPolicy", "gang").get("minCount"))
                      .orElse(0));
      phase = Json.text(Json.object(group.get(), "status"), "phase");
      ((ObjectNode) group.get())
          .put("apiVersion", "scheduling.x-k8s.io/v1alpha1")
          .put("kind", "PodGroup");
      related.add(0, group.get());
    }
    Optional<Boolean> mayRead = Optional.empty();
    if (sched.account.isPresent()) {
      mayRead = podGroupAccess(sched.account.get(), r, findings);
    }
    findings.addAll(preflight(sched.documents, related, r));
    if (group.isEmpty()
        && r.podGroupsServed
        && findings.stream().noneMatch(f -> f.checkId().equals("PF08"))) {
      findings.add(
          Audit.finding(
              "PF08",
              "unknown-pod-group",
              Severity.ERROR,
              "PodGroup " + ns + "/" + name,
              "",
              "PodGroup "
                  + ns
                  + "/"
                  + name
                  + " does not exist"
                  + (members.isEmpty()
                      ? ""
                      : ", but "
                          + members.size()
                          + " pod(s) name it: Coscheduling rejects them in PreFilter and they stay Pending"),
              "Create the PodGroup (kubectl apply -f your PodGroup manifest) or fix the pods' group name."));
    }
    findings.addAll(
        symptoms(
            related.stream().filter(o -> Json.text(o, "kind").equals("Pod")).toList(),
            events.orElse(List.of()),
            group.map(List::of).orElse(List.of()),
            sched,
            Map.of()));
    GangEntry entry =
        new GangEntry(
            ns,
            name,
            group.isPresent(),
            minMember,
            phase,
            members,
            sched.account.orElse("(unknown)"),
            mayRead);
    return new DoctorReport(
        "gang",
        List.of(),
        Optional.of(entry),
        Optional.empty(),
        sortFindings(findings),
        r.notes,
        r.unreadable);
  }

  private GangEntry.Member member(
      JsonNode p, String via, List<JsonNode> events, Map<String, String> holds) {
    String key = Json.key(p);
    JsonNode status = Json.object(p, "status");
    String phase = Json.string(status, "phase").orElse("Pending");
    String node = Json.text(Json.object(p, "spec"), "nodeName");
    String bindPhase = Json.annotations(p).getOrDefault(HamiAnnotations.BIND_PHASE, "");
    String scheduling = "";
    for (JsonNode c : Json.objects(status, "conditions")) {
      if (Json.text(c, "type").equals("PodScheduled") && !Json.text(c, "status").equals("True")) {
        scheduling = Json.text(c, "reason") + ": " + Json.text(c, "message");
      }
    }
    Optional<JsonNode> latest = latestEvent(events, "Pod", Json.namespace(p), Json.name(p));
    String latestText =
        latest.map(e -> Json.text(e, "reason") + ": " + Json.text(e, "message")).orElse("");
    String lock = "";
    if (holds.containsKey(key)) {
      lock = "holds " + holds.get(key);
    } else if (node.isEmpty() && lockSignature(scheduling + " " + latestText)) {
      lock =
          "bind failed on a held node lock: "
              + (lockSignature(scheduling) ? scheduling : latestText);
    }
    return new GangEntry.Member(
        Json.name(p), via, phase, node, bindPhase, scheduling, latestText, lock);
  }

  /** holder "ns/name" → "lock KEY on node N" for every lock value naming an owner. */
  private Map<String, String> lockHolders(List<JsonNode> nodes) {
    Map<String, String> out = new LinkedHashMap<>();
    for (JsonNode n : nodes) {
      Map<String, String> a = Json.annotations(n);
      for (String key : lockKeys()) {
        String v = a.get(key);
        if (v != null) {
          ownerText(v)
              .ifPresent(
                  o ->
                      out.put(
                          o,
                          "lock "
                              + key
                              + " on node "
                              + Json.name(n)
                              + ageOf(v)
                                  .map(d -> " for " + LockJudgement.formatAge(d))
                                  .orElse("")));
        }
      }
    }
    return out;
  }

  private Optional<Duration> ageOf(String value) {
    try {
      return Optional.of(
          Duration.between(LockRecordCodec.parse(value).acquiredAt(), clock.instant()));
    } catch (MalformedLockException | ArithmeticException e) {
      return Optional.empty();
    }
  }

  // ---------------------------------------------------------------------------- diagnose

  /**
   * {@code diagnose}: the guide's four symptoms — DR01 a bind failed on a held node lock (causes:
   * PF05, retry disabled, PF03), DR02 a crash-looping scheduler (PF01), DR03 PodGroups with Pending
   * members (PF06, PF04, PF02/PF07/PF08), DR04 the musl {@code libdl.so.2} failure (PF09) — plus
   * every other preflight check over the live objects and the node locks (DR05).
   *
   * @return the report
   */
  public DoctorReport diagnose() {
    Reads r = new Reads();
    List<Finding> findings = new ArrayList<>();
    Optional<List<JsonNode>> nodes = r.list(Cluster.NODES, Optional.empty());
    Optional<List<JsonNode>> pods = r.list(Cluster.PODS, namespace);
    Optional<List<JsonNode>> allPods =
        namespace.isEmpty() ? pods : r.list(Cluster.PODS, Optional.empty());
    Optional<List<JsonNode>> events =
        r.listOptional(
            Cluster.EVENTS, namespace, "events (BindingFailed, crash and libdl evidence)");
    Optional<List<JsonNode>> groups = r.listPodGroups(namespace);
    Scheduler sched = scheduler(r);
    List<JsonNode> live = new ArrayList<>();
    for (JsonNode p : pods.orElse(List.of())) {
      if (!terminal(p)) {
        live.add(p);
      }
    }
    boolean podsNameGroups =
        live.stream()
            .anyMatch(
                p ->
                    Json.labels(p).containsKey(GangMembership.POD_GROUP_LABEL)
                        || Json.annotations(p).containsKey(GangMembership.POD_GROUP_LABEL));
    if (groups.isEmpty() && podsNameGroups && r.podGroupsServed == false && !r.podGroupsForbidden) {
      findings.add(
          Audit.finding(
              DR07,
              "podgroup-crd-missing",
              Severity.ERROR,
              "API server",
              "/apis/scheduling.x-k8s.io/v1alpha1",
              "pods name PodGroups (scheduling.x-k8s.io/pod-group) but this API server does not serve"
                  + " podgroups.scheduling.x-k8s.io: Coscheduling cannot find their groups and they stay Pending",
              "Install the scheduler-plugins PodGroup CRD (config/crd/bases/scheduling.x-k8s.io_podgroups.yaml)."));
    }
    boolean coscheduling =
        groups.map(g -> !g.isEmpty()).orElse(false)
            || podsNameGroups
            || sched.documents.stream().anyMatch(d -> d.root().toString().contains("Coscheduling"));
    if (sched.account.isPresent() && coscheduling) {
      podGroupAccess(sched.account.get(), r, findings);
    }
    List<JsonNode> objects = new ArrayList<>();
    objects.addAll(groups.orElse(List.of()));
    objects.addAll(live);
    findings.addAll(preflight(sched.documents, objects, r));
    List<NodeEntry> nodeEntries = List.of();
    if (nodes.isPresent()) {
      nodeEntries =
          nodeEntries(
              nodes.get(), allPods.orElse(List.of()), Audit.dra(cluster, findings, r.notes), r);
      findings.addAll(lockFindings(nodeEntries));
    }
    Map<String, LockEntry> locksByNode = new LinkedHashMap<>();
    nodeEntries.forEach(n -> n.locks().forEach(l -> locksByNode.putIfAbsent(n.node(), l)));
    findings.addAll(
        symptoms(
            pods.orElse(List.of()),
            events.orElse(List.of()),
            groups.orElse(List.of()),
            sched,
            locksByNode));
    return new DoctorReport(
        "diagnose",
        nodeEntries.stream().filter(n -> !n.locks().isEmpty()).toList(),
        Optional.empty(),
        Optional.empty(),
        sortFindings(findings),
        r.notes,
        r.unreadable);
  }

  /** DR01-DR04 from pods' status and events. */
  private List<Finding> symptoms(
      List<JsonNode> pods,
      List<JsonNode> events,
      List<JsonNode> groups,
      Scheduler sched,
      Map<String, LockEntry> locksByNode) {
    List<Finding> out = new ArrayList<>();
    for (JsonNode p : pods) {
      String key = Json.key(p);
      Location at = Location.nowhere("Pod " + key);
      JsonNode status = Json.object(p, "status");
      boolean bound = !Json.text(Json.object(p, "spec"), "nodeName").isEmpty();
      List<String> evidence = new ArrayList<>();
      for (JsonNode c : Json.objects(status, "conditions")) {
        if (Json.text(c, "type").equals("PodScheduled") && !Json.text(c, "status").equals("True")) {
          evidence.add("PodScheduled " + Json.text(c, "reason") + ": " + Json.text(c, "message"));
        }
      }
      List<JsonNode> mine =
          events.stream().filter(e -> isAbout(e, "Pod", Json.namespace(p), Json.name(p))).toList();
      mine.forEach(
          e -> evidence.add("event " + Json.text(e, "reason") + ": " + Json.text(e, "message")));
      // symptom 1: BindingFailed on a held node lock
      Optional<String> lockEvidence =
          evidence.stream().filter(Doctor::lockSignature).reduce((a, b) -> b);
      if (!bound && !terminal(p) && lockEvidence.isPresent()) {
        out.add(bindingFailed(p, at, lockEvidence.get(), sched, locksByNode));
      }
      // symptom 2: the scheduler crash-loops (on two queue-sort plugins)
      List<String> containerText = containerTexts(status);
      Optional<String> queueSort = firstWith(QUEUE_SORT, containerText, evidence);
      Optional<String> crash =
          queueSort.isPresent() || !isScheduler(p)
              ? queueSort
              : containerText.stream().filter(t -> t.startsWith("CrashLoopBackOff")).findFirst();
      crash.ifPresent(
          t ->
              out.add(
                  new Finding(
                      DR02,
                      "scheduler-crash-loop",
                      Severity.ERROR,
                      at,
                      "the scheduler crash-loops: " + t,
                      queueSort.isPresent()
                          ? "Disable PrioritySort where Coscheduling is enabled (profiles[].plugins.queueSort.disabled: [{name:"
                              + " PrioritySort}], or under multiPoint) in the scheduler's KubeSchedulerConfiguration; see PF01."
                          : "Read its log (kubectl logs --previous "
                              + Json.name(p)
                              + " -n "
                              + Json.namespace(p)
                              + "); a KubeSchedulerConfiguration error is also checked by PF01/PF02.")));
      // symptom 4: musl image with HAMi's LD_PRELOAD library
      firstWith(LIBDL, containerText, evidence)
          .ifPresent(
              t ->
                  out.add(
                      new Finding(
                          DR04,
                          "musl-libdl",
                          Severity.ERROR,
                          at,
                          "a container fails with the musl signature: "
                              + t
                              + " (HAMi's LD_PRELOAD library needs glibc)",
                          "Use a glibc-based image (e.g. ubuntu, debian, nvidia/cuda) for containers with HAMi resources; see PF09.")));
    }
    // symptom 3: gang members stay Pending
    for (JsonNode g : groups) {
      String ns = Json.namespace(g);
      String name = Json.name(g);
      List<JsonNode> members =
          pods.stream()
              .filter(p -> Json.namespace(p).equals(ns))
              .filter(
                  p ->
                      name.equals(Json.labels(p).get(GangMembership.POD_GROUP_LABEL))
                          || Json.string(Json.object(p, "spec", "schedulingGroup"), "podGroupName")
                              .filter(name::equals)
                              .isPresent())
              .filter(p -> !terminal(p))
              .toList();
      List<JsonNode> pending =
          members.stream()
              .filter(p -> Json.text(Json.object(p, "spec"), "nodeName").isEmpty())
              .toList();
      long annotated =
          pods.stream()
              .filter(p -> Json.namespace(p).equals(ns))
              .filter(
                  p ->
                      name.equals(Json.annotations(p).get(GangMembership.POD_GROUP_LABEL))
                          && !Json.labels(p).containsKey(GangMembership.POD_GROUP_LABEL))
              .count();
      int min = intValue(Json.object(g, "spec").get("minMember")).orElse(0);
      if (pending.isEmpty() && !(members.size() < min)) {
        continue;
      }
      String latestText =
          pending.stream()
              .map(p -> latestEvent(events, "Pod", ns, Json.name(p)))
              .flatMap(Optional::stream)
              .max(Comparator.comparing(Doctor::eventTime))
              .map(
                  e ->
                      "; latest event "
                          + Json.name(Json.object(e, "involvedObject"))
                          + " "
                          + Json.text(e, "reason")
                          + ": "
                          + Json.text(e, "message"))
              .orElse("");
      List<String> causes = new ArrayList<>();
      if (members.size() < min) {
        causes.add("only " + members.size() + " member(s) exist for minMember " + min + " (PF06)");
      }
      if (annotated > 0) {
        causes.add(annotated + " pod(s) carry the group under annotations, not labels (PF05)");
      }
      out.add(
          Audit.finding(
              DR03,
              "gang-pending",
              Severity.WARNING,
              "PodGroup " + ns + "/" + name,
              "",
              pending.size()
                  + " of "
                  + members.size()
                  + " member(s) of PodGroup "
                  + ns
                  + "/"
                  + name
                  + " (minMember "
                  + min
                  + ", phase "
                  + Json.string(Json.object(g, "status"), "phase").orElse("unset")
                  + ") are Pending"
                  + (causes.isEmpty() ? "" : ": " + String.join("; ", causes))
                  + latestText,
              "Fix the causes listed with it (PF04 PodGroup RBAC, PF05 label, PF06 quorum, PF02/PF07 scheduler"
                  + " profile); hami-lock-doctor gang "
                  + ns
                  + "/"
                  + name
                  + " shows each member."));
    }
    return out;
  }

  private Finding bindingFailed(
      JsonNode p,
      Location at,
      String evidence,
      Scheduler sched,
      Map<String, LockEntry> locksByNode) {
    Map<String, String> labels = Json.labels(p);
    Map<String, String> annotations = Json.annotations(p);
    Optional<String> sg = Json.string(Json.object(p, "spec", "schedulingGroup"), "podGroupName");
    boolean member = GangMembership.isMember(labels, sg);
    List<String> causes = new ArrayList<>();
    List<String> fixes = new ArrayList<>();
    if (!member && annotations.containsKey(GangMembership.POD_GROUP_LABEL)) {
      causes.add(
          "scheduling.x-k8s.io/pod-group is under metadata.annotations, so the pod is no gang member and"
              + " its bind fails fast on a held lock (PF05)");
      fixes.add("move scheduling.x-k8s.io/pod-group to metadata.labels (recreate the pod)");
    } else if (!member) {
      causes.add(
          "the pod is no gang member: its bind fails fast on a held lock and kube-scheduler retries after backoff"
              + " (HAMi's behaviour for every pod)");
      fixes.add("if it belongs to a gang, add the label scheduling.x-k8s.io/pod-group");
    } else {
      Optional<Duration> retry = sched.retryTimeout;
      if (retry.isPresent() && (retry.get().isZero() || retry.get().isNegative())) {
        causes.add(
            "the extender's --node-lock-retry-timeout is "
                + sched.retryText.orElse("0")
                + ": gang members do not wait for the lock (retry disabled)");
        fixes.add(
            "set --node-lock-retry-timeout=28s (below the extender httpTimeout) on the scheduler extender");
      } else {
        causes.add(
            "the lock stayed held past the retry timeout ("
                + sched.retryText.orElse("28s default")
                + "); see PF03 if it is not below the extender's httpTimeout");
        fixes.add(
            "find the holder with hami-lock-doctor locks (a stuck-allocating holder means the device plugin"
                + " did not finish Allocate)");
      }
    }
    String node = nodeIn(evidence);
    if (node != null && locksByNode.containsKey(node)) {
      LockEntry l = locksByNode.get(node);
      causes.add("node " + node + " lock is " + l.state().word() + ": " + l.detail());
    }
    Severity s =
        member || annotations.containsKey(GangMembership.POD_GROUP_LABEL)
            ? Severity.ERROR
            : Severity.WARNING;
    return new Finding(
        DR01,
        "lock-binding-failed",
        s,
        at,
        "Pending after a bind failed on a held node lock ("
            + evidence
            + "); cause: "
            + String.join("; ", causes),
        String.join("; ", fixes) + ".");
  }

  private static String nodeIn(String text) {
    Matcher m = LOCKED_NODE.matcher(text);
    return m.find() ? Objects.requireNonNullElse(m.group(1), m.group(2)) : null;
  }

  private static List<String> containerTexts(JsonNode status) {
    List<String> out = new ArrayList<>();
    for (String field : List.of("initContainerStatuses", "containerStatuses")) {
      for (JsonNode cs : Json.objects(status, field)) {
        String c = Json.text(cs, "name");
        JsonNode waiting = Json.object(cs, "state", "waiting");
        if (!waiting.isEmpty()) {
          out.add(
              Json.text(waiting, "reason")
                  + " (container "
                  + c
                  + "): "
                  + Json.text(waiting, "message"));
        }
        for (String st : List.of("state", "lastState")) {
          JsonNode term = Json.object(cs, st, "terminated");
          if (!term.isEmpty()) {
            out.add(
                "terminated "
                    + Json.text(term, "reason")
                    + " exit "
                    + Json.text(term, "exitCode")
                    + " (container "
                    + c
                    + "): "
                    + Json.text(term, "message"));
          }
        }
      }
    }
    return out;
  }

  private static boolean isScheduler(JsonNode pod) {
    if (Json.name(pod).contains("scheduler")) {
      return true;
    }
    return Json.objects(Json.object(pod, "spec"), "containers").stream()
        .anyMatch(
            c ->
                Json.text(c, "name").contains("scheduler")
                    || Json.text(c, "command").contains("scheduler"));
  }

  private static Optional<String> firstWith(String text, List<String> first, List<String> then) {
    return Stream.concat(first.stream(), then.stream()).filter(t -> t.contains(text)).findFirst();
  }

  static boolean lockSignature(String text) {
    return LOCK_SIGNATURES.stream().anyMatch(text::contains);
  }

  private static boolean terminal(JsonNode pod) {
    String phase = Json.text(Json.object(pod, "status"), "phase");
    return phase.equals("Succeeded")
        || phase.equals("Failed")
        || Json.string(Json.object(pod, "metadata"), "deletionTimestamp").isPresent();
  }

  private static boolean isAbout(JsonNode event, String kind, String ns, String name) {
    JsonNode io = Json.object(event, "involvedObject");
    if (io.isEmpty()) {
      io = Json.object(event, "regarding");
    }
    return Json.text(io, "kind").equals(kind)
        && Json.text(io, "name").equals(name)
        && (Json.text(io, "namespace").isEmpty() || Json.text(io, "namespace").equals(ns));
  }

  private static Optional<JsonNode> latestEvent(
      List<JsonNode> events, String kind, String ns, String name) {
    return events.stream()
        .filter(e -> isAbout(e, kind, ns, name))
        .max(Comparator.comparing(Doctor::eventTime));
  }

  private static Instant eventTime(JsonNode e) {
    for (String f : List.of("lastTimestamp", "eventTime", "firstTimestamp")) {
      Optional<String> t = Json.string(e, f);
      if (t.isPresent()) {
        try {
          return Instant.parse(t.get());
        } catch (DateTimeParseException ignored) {
          // try the next field
        }
      }
    }
    try {
      return Instant.parse(Json.text(Json.object(e, "metadata"), "creationTimestamp"));
    } catch (DateTimeParseException ex) {
      return Instant.EPOCH;
    }
  }

  private static Optional<Integer> intValue(JsonNode e) {
    if (e != null && e.canConvertToInt()) {
      return Optional.of(e.intValue());
    }
    try {
      return e != null && e.isTextual()
          ? Optional.of(Integer.parseInt(e.textValue()))
          : Optional.empty();
    } catch (NumberFormatException ex) {
      return Optional.empty();
    }
  }

  // --------------------------------------------------------------------- shared pieces

  /**
   * The scheduler as found live: its configuration and Deployment documents, ServiceAccount and
   * retry timeout.
   */
  private static final class Scheduler {
    final List<ManifestDocument> documents = new ArrayList<>();
    Optional<String> account = Optional.empty();
    Optional<Duration> retryTimeout = Optional.empty();
    Optional<String> retryText = Optional.empty();
  }

  /**
   * ConfigMaps holding a KubeSchedulerConfiguration and Deployments running a scheduler, all
   * namespaces; the account is the HAMi scheduler Deployment's, else {@code hami-scheduler} in the
   * configuration's namespace, else in {@code hami-system}.
   */
  private Scheduler scheduler(Reads r) {
    Scheduler s = new Scheduler();
    List<JsonNode> configs = new ArrayList<>();
    Optional<List<JsonNode>> configMaps = r.list(Cluster.CONFIGMAPS, Optional.empty());
    for (JsonNode cm : configMaps.orElse(List.of())) {
      if (Json.object(cm, "data").toString().contains("KubeSchedulerConfiguration")) {
        configs.add(cm);
      }
    }
    List<JsonNode> deployments = new ArrayList<>();
    for (JsonNode d :
        r.listOptional(
                Cluster.DEPLOYMENTS,
                Optional.empty(),
                "deployments (the scheduler's flags and" + " ServiceAccount)")
            .orElse(List.of())) {
      if (Json.object(d, "spec", "template").toString().contains("scheduler")) {
        deployments.add(d);
      }
    }
    List<JsonNode> all = new ArrayList<>(configs);
    all.addAll(deployments);
    s.documents.addAll(documents(all, r));
    try {
      ManifestModel model = ManifestModel.of(s.documents);
      for (SchedulerDeployment d : model.schedulerDeployments()) {
        String ns = d.template().namespace().orElse("default");
        s.account =
            Optional.of(
                "system:serviceaccount:" + ns + ":" + d.serviceAccountName().orElse("default"));
        d.extenderFlags()
            .nodeLockRetryTimeout()
            .ifPresent(
                f -> {
                  s.retryText = Optional.of(f.text());
                  try {
                    s.retryTimeout = Optional.of(GoDuration.parse(f.text()));
                  } catch (InvalidGoDurationException e) {
                    s.retryTimeout = Optional.empty();
                  }
                });
        break;
      }
    } catch (ManifestException e) {
      r.notes.add("scheduler configuration not understood: " + e.getMessage());
    }
    if (s.account.isEmpty()) {
      String ns =
          configs.stream()
              .filter(c -> Json.name(c).equals("hami-scheduler"))
              .map(Json::namespace)
              .findFirst()
              .orElse(configs.stream().map(Json::namespace).findFirst().orElse("hami-system"));
      s.account = Optional.of("system:serviceaccount:" + ns + ":hami-scheduler");
    }
    schedulerAccount.ifPresent(
        a ->
            s.account =
                Optional.of(
                    a.startsWith("system:") ? a : "system:serviceaccount:" + a.replace('/', ':')));
    if (configMaps.isEmpty()) {
      // the reason is in the report once, as what could not be read
      r.notes.add(
          "ConfigMaps could not be read: the queue-sort, Coscheduling and httpTimeout checks"
              + " (PF01-PF03, PF11) were not run");
    } else if (configs.isEmpty()) {
      r.notes.add(
          "no ConfigMap with a KubeSchedulerConfiguration found: the queue-sort, Coscheduling and httpTimeout"
              + " checks (PF01-PF03, PF11) had nothing to read");
    }
    return s;
  }

  /**
   * PF04 from a live SubjectAccessReview: may the scheduler get, list and watch PodGroups
   * cluster-wide?
   */
  private Optional<Boolean> podGroupAccess(String account, Reads r, List<Finding> findings) {
    List<String> denied = new ArrayList<>();
    for (String verb : List.of("get", "list", "watch")) {
      Optional<JsonNode> st;
      try {
        st = cluster.accessReview(account, verb, "scheduling.x-k8s.io", "podgroups");
      } catch (ClusterReadException e) {
        r.unreadable.add(e);
        return Optional.empty();
      }
      if (st.isEmpty()) {
        r.notes.add(
            "SubjectAccessReviews are not served by this API server: whether "
                + account
                + " may read PodGroups (PF04) was not checked");
        return Optional.empty();
      }
      if (!Json.string(st.get(), "allowed").map(Boolean::parseBoolean).orElse(false)) {
        denied.add(verb);
      }
    }
    if (!denied.isEmpty()) {
      String[] parts = account.split(":");
      findings.add(
          Audit.finding(
              "PF04",
              "podgroup-rbac",
              Severity.ERROR,
              "SubjectAccessReview " + account,
              "",
              account
                  + " may not "
                  + String.join("/", denied)
                  + " podgroups.scheduling.x-k8s.io cluster-wide: Coscheduling's"
                  + " PreFilter cannot find any PodGroup and every member stays Pending",
              "Bind a ClusterRole with get/list/watch on podgroups.scheduling.x-k8s.io to ServiceAccount "
                  + (parts.length == 4 ? parts[2] + "/" + parts[3] : account)
                  + " with a ClusterRoleBinding (the guide's rbac-podgroup-reader.yaml)."));
      return Optional.of(false);
    }
    return Optional.of(true);
  }

  /** Preflight's standard checks over live objects (PF04 is replaced by the live access review). */
  private List<Finding> preflight(
      List<ManifestDocument> schedulerDocs, List<JsonNode> objects, Reads r) {
    List<ManifestDocument> docs = new ArrayList<>(schedulerDocs);
    docs.addAll(documents(objects, r));
    if (docs.isEmpty()) {
      return List.of();
    }
    List<Finding> out = new ArrayList<>();
    try {
      for (Finding f : Preflight.standard().check(docs).findings()) {
        if (f.checkId().equals("PF04")) {
          continue;
        }
        out.add(
            Audit.finding(
                f.checkId(),
                f.checkName(),
                f.severity(),
                f.location().source(),
                f.location().path(),
                f.message().replace("the files create", "the cluster has"),
                f.fix()));
      }
    } catch (ManifestException e) {
      r.notes.add("preflight checks not run: " + e.getMessage());
    }
    return out;
  }

  private static List<ManifestDocument> documents(List<JsonNode> objects, Reads r) {
    List<ManifestDocument> out = new ArrayList<>();
    for (JsonNode o : objects) {
      JsonNode copy = o.deepCopy();
      if (copy.path("metadata") instanceof ObjectNode metadata) {
        metadata.remove("managedFields");
      }
      String label = Json.text(copy, "kind") + " " + Json.key(copy);
      try {
        out.addAll(ManifestLoader.parse(label, copy.toString()));
      } catch (ManifestException e) {
        r.notes.add(label + " not checked: " + e.getMessage());
      }
    }
    return out;
  }

  private static List<Finding> sortFindings(List<Finding> findings) {
    List<Finding> out = new ArrayList<>(new LinkedHashSet<>(findings));
    out.sort(
        Comparator.comparing((Finding f) -> f.severity().ordinal())
            .thenComparing(Finding::checkId)
            .thenComparing(f -> f.location().source()));
    return out;
  }

  static ClusterReadException fromBackend(String what, LockBackendException e, String permission) {
    Throwable c = e.getCause();
    while (c != null && !(c instanceof ApiException)) {
      c = c.getCause();
    }
    if (c instanceof ApiException api) {
      return Cluster.failure(what, api, permission);
    }
    return new ClusterReadException(what, 0, e.getMessage(), Optional.empty(), e);
  }

  /** What one command read: failures and notes collected instead of thrown. */
  private final class Reads {
    final List<ClusterReadException> unreadable = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    boolean podGroupsServed = true;
    boolean podGroupsForbidden;

    Optional<List<JsonNode>> list(Cluster.Resource res, Optional<String> ns) {
      return list(res, ns, res.qualified() + " are not served by this API server");
    }

    /** A list whose absence (not served) is only a note. */
    Optional<List<JsonNode>> listOptional(
        Cluster.Resource res, Optional<String> ns, String purpose) {
      return list(res, ns, purpose + ": not served by this API server, not checked");
    }

    private Optional<List<JsonNode>> list(
        Cluster.Resource res, Optional<String> ns, String notServed) {
      try {
        Optional<List<JsonNode>> l = cluster.list(res, ns);
        if (l.isEmpty()) {
          notes.add(notServed);
        }
        return l;
      } catch (ClusterReadException e) {
        unreadable.add(e);
        return Optional.empty();
      }
    }

    Optional<List<JsonNode>> listPodGroups(Optional<String> ns) {
      try {
        Optional<List<JsonNode>> l = cluster.list(Cluster.PODGROUPS, ns);
        podGroupsServed = l.isPresent();
        return l;
      } catch (ClusterReadException e) {
        podGroupsForbidden = true;
        unreadable.add(e);
        return Optional.empty();
      }
    }

    Optional<JsonNode> get(Cluster.Resource res, Optional<String> ns, String name) {
      try {
        if (res == Cluster.PODGROUPS && cluster.list(res, ns).isEmpty()) {
          podGroupsServed = false;
          notes.add(
              "podgroups.scheduling.x-k8s.io are not served by this API server (CRD not installed)");
          return Optional.empty();
        }
        return cluster.get(res, ns, name);
      } catch (ClusterReadException e) {
        unreadable.add(e);
        return Optional.empty();
      }
    }
  }

  /** Builder for {@link Doctor}. Not thread-safe. */
  public static final class Builder {
    private final ApiClient client;
    private Optional<String> namespace = Optional.empty();
    private InstantSource clock;
    private InstantSource local = Clock.systemUTC();
    private Duration lockTimeout;
    private VendorRegistry registry;
    private Optional<String> schedulerAccount = Optional.empty();

    private Builder(ApiClient client) {
      this.client = client;
    }

    /**
     * @param namespace limit pods, events and PodGroups to this namespace; empty for all
     * @return this builder
     */
    public Builder namespace(Optional<String> namespace) {
      this.namespace = Objects.requireNonNull(namespace, "namespace");
      return this;
    }

    /**
     * @param clock the time lock ages are measured against, used as is (default: the API server's
     *     clock, this machine's corrected by the {@code Date} header of the server's answers, so
     *     that a skewed local clock does not judge a live lock expired)
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Tests: this machine's clock, which the default clock corrects by the server's. */
    Builder localClock(InstantSource local) {
      this.local = Objects.requireNonNull(local, "local");
      return this;
    }

    /**
     * @param lockTimeout the lock timeout (default {@code HAMI_NODELOCK_EXPIRE} or 5 min); positive
     * @return this builder
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return this;
    }

    /**
     * @param registry the device vendors (lock keys, registrations); default: ServiceLoader
     *     discovery
     * @return this builder
     */
    public Builder registry(VendorRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /**
     * @param account the scheduler's ServiceAccount as {@code NS/NAME} or a user name; default:
     *     found from the scheduler Deployment, else {@code hami-scheduler}
     * @return this builder
     */
    public Builder schedulerAccount(Optional<String> account) {
      this.schedulerAccount = Objects.requireNonNull(account, "account");
      return this;
    }

    /**
     * @return the doctor
     * @throws IllegalArgumentException if the lock timeout is not positive or {@code
     *     HAMI_NODELOCK_EXPIRE} is invalid
     */
    public Doctor build() {
      lockTimeout =
          LockSettings.resolveLockTimeout(Optional.ofNullable(lockTimeout), System.getenv());
      if (registry == null) {
        registry = VendorRegistry.discover();
      }
      return new Doctor(this);
    }
  }
}
