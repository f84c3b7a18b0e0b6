package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.HamiStack;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.RealApiServer;
import io.kubernetes.client.openapi.ApiClient;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 14 item 7: {@code kill -9} of the real kube-apiserver (etcd kept) in the middle of a gang
 * run, and its restart on the same port and etcd ({@link RealApiServer.Builder#apiserverChild}).
 *
 * <p>Eight pods ({@code nvidia.com/gpu: 1}, {@code gpumem: 3000}, {@code gpucores: 20}) of one gang
 * are bound to one node (fixture F-03: 2× A40) by four scheduler replicas (own {@code ApiClient}s
 * and {@link KubernetesHamiStack} stacks, lock timeout 10 s), two pods each, while a simulated
 * kubelet hands devices out through {@code DevicePluginHandoff} once a second (which releases the
 * node lock). After the second pod is bound, the API server is killed with SIGKILL from Java, left
 * down for 5 s and restarted. Checked:
 *
 * <ul>
 *   <li>no two holders ever: the node's lock values, rebuilt from a node watch of our own (resumed
 *       from its last resourceVersion, relisting on 410), never pass from one owner to another
 *       without a release, except a takeover of a lock older than the timeout;
 *   <li>while the server is down, a read is a typed {@code ClusterException} UNAVAILABLE, and every
 *       bind attempt ends in a typed result (FAILED with a reason, or BOUND once the server is
 *       back), never an exception;
 *   <li>the replicas' lock watches relist after the restart and the waiters resume: every pod ends
 *       bound (a failure names each pod left and its last reason);
 *   <li>no lock value lives longer than the lock timeout plus the time the server was down plus 5 s
 *       of slack (polling, the kubelet's 1 s period), and none is left at the end.
 * </ul>
 */
@Tag("real-apiserver")
class RealApiServerKillTest {
  static final String NS = "default";
  static final String NODE = "gpu-node-1";
  static final String LOCK = "hami.io/mutex.lock";
  static final Duration LOCK_TIMEOUT = Duration.ofSeconds(10);
  static final Duration DOWN = Duration.ofSeconds(5);
  static final int REPLICAS = 4;
  static final int PODS = 8;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** One observed lock value: from when our watch saw it until it saw another (nanoTime). */
  record Observed(String rv, String value, long since) {}

  /** One bind attempt of a replica. */
  record Attempt(String pod, long startNanos, long endNanos, String outcome, String reason) {}

  private RealApiServer k8s;
  private final List<KubernetesHamiStack> replicas = new ArrayList<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final AtomicBoolean stop = new AtomicBoolean();

  @BeforeEach
  void start() {
    k8s =
        RealApiServer.builder()
            .apiserverChild(true)
            .clientReadTimeout(Duration.ofSeconds(10))
            .start();
    for (int r = 0; r < REPLICAS; r++) {
      replicas.add(
          KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
              .lockTimeout(LOCK_TIMEOUT)
              .requestTimeout(Duration.ofSeconds(3))
              .maxAttempts(2)
              .retryPolicy(
                  RetryPolicy.builder()
                      .pollInterval(Duration.ofMillis(100))
                      .retryTimeout(Duration.ofSeconds(20))
                      .build())
              .build());
    }
  }

  @AfterEach
  void stop() {
    stop.set(true);
    pool.shutdownNow();
    replicas.forEach(KubernetesHamiStack::close);
    if (k8s != null) {
      k8s.close();
    }
  }

  @Test
  void aKilledApiServerNeverLetsTwoHoldersInAndTheGangCompletesAfterItsRestart() throws Exception {
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Node",
            "metadata",
            Map.of(
                "name",
                NODE,
                "annotations",
                Map.of("hami.io/node-nvidia-register", RealScaleTest.F03)),
            "status",
            Map.of(
                "allocatable",
                Map.of("nvidia.com/gpu", "20"),
                "capacity",
                Map.of("nvidia.com/gpu", "20"))));
    Map<String, String> uids = new LinkedHashMap<>();
    for (int i = 1; i <= PODS; i++) {
      String name = "gang-worker-" + i;
      uids.put(
          name,
          k8s.create(
                  Map.of(
                      "apiVersion",
                      "v1",
                      "kind",
                      "Pod",
                      "metadata",
                      Map.of(
                          "name",
                          name,
                          "namespace",
                          NS,
                          "labels",
                          Map.of("scheduling.x-k8s.io/pod-group", "gang")),
                      "spec",
                      Map.of(
                          "schedulerName",
                          "hami-scheduler",
                          "containers",
                          List.of(
                              Map.of(
                                  "name",
                                  "worker",
                                  "image",
                                  "ubuntu:22.04",
                                  "resources",
                                  Map.of(
                                      "limits",
                                      Map.of(
                                          "nvidia.com/gpu",
                                          "1",
                                          "nvidia.com/gpumem",
                                          "3000",
                                          "nvidia.com/gpucores",
                                          "20")))))))
              .path("metadata")
              .path("uid")
              .asText());
    }
    for (KubernetesHamiStack r : replicas) {
      assertThat(r.awaitReady(Duration.ofSeconds(30))).isTrue();
    }

    List<Observed> history = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger watcherRelists = new AtomicInteger();
    Future<?> watcher =
        pool.submit(() -> watchLock(k8s.newApiClient(Duration.ZERO), history, watcherRelists));
    Future<?> kubelet = pool.submit(this::kubelet);

    List<Attempt> attempts = Collections.synchronizedList(new ArrayList<>());
    Map<String, String> lastReason = new ConcurrentHashMap<>();
    AtomicInteger bound = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> members = new ArrayList<>();
    List<String> pods = new ArrayList<>(uids.keySet());
    for (int r = 0; r < REPLICAS; r++) {
      KubernetesHamiStack replica = replicas.get(r);
      List<String> mine = List.of(pods.get(r), pods.get(r + REPLICAS));
      members.add(
          pool.submit(
              () -> {
                go.await();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                for (String pod : mine) {
                  while (System.nanoTime() < deadline) {
                    long t0 = System.nanoTime();
                    String outcome;
                    String reason;
                    try {
                      BindResult res = replica.podBinder().bind(NS, pod, uids.get(pod), NODE);
                      outcome = res.outcome().name();
                      reason = res.reason();
                    } catch (Exception e) {
                      outcome = "EXCEPTION";
                      reason = e.toString();
                    }
                    attempts.add(new Attempt(pod, t0, System.nanoTime(), outcome, reason));
                    lastReason.put(pod, outcome + ": " + reason);
                    if (outcome.equals(BindOutcome.BOUND.name())) {
                      bound.incrementAndGet();
                      break;
                    }
                    Thread.sleep(200);
                  }
                }
                return null;
              }));
    }
    go.countDown();

    long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (bound.get() < 2 && System.nanoTime() < waitUntil) {
      Thread.sleep(20);
    }
    assertThat(bound.get())
        .as("pods bound before the kill")
        .isGreaterThanOrEqualTo(2)
        .isLessThan(PODS);
    Map<String, Long> relistsBefore = relists();
    long killedAt = System.nanoTime();
    String exited = k8s.killApiServer();
    assertThat(exited).isEqualTo("apiserver-exited signal killed");
    // a read while it is down: a typed error naming the cause, not a hang or an unchecked exception
    ClusterException down = null;
    try {
      KubernetesCluster.create(k8s.newApiClient(Duration.ofSeconds(10))).readNode(NODE);
    } catch (ClusterException e) {
      down = e;
    }
    assertThat(down).as("readNode while the API server is down").isNotNull();
    assertThat(down.kind()).isEqualTo(ClusterException.Kind.UNAVAILABLE);
    long sleepFor = DOWN.toMillis() - (System.nanoTime() - killedAt) / 1_000_000;
    if (sleepFor > 0) {
      Thread.sleep(sleepFor);
    }
    long restartAt = System.nanoTime();
    k8s.startApiServer(Duration.ofSeconds(120));
    long readyAt = System.nanoTime();
    System.out.printf(
        Locale.ROOT,
        "kill-test: killed after %d bound; down %.1f s (restart took %.1f s)%n",
        bound.get(),
        (readyAt - killedAt) / 1e9,
        (readyAt - restartAt) / 1e9);

    for (Future<?> m : members) {
      m.get(150, TimeUnit.SECONDS);
    }
    List<String> left = new ArrayList<>();
    for (String pod : pods) {
      JsonNode p = k8s.get("pods", NS, pod).orElseThrow();
      if (!NODE.equals(p.path("spec").path("nodeName").asText())) {
        left.add(pod + " (" + lastReason.get(pod) + ")");
      }
    }
    assertThat(left).as("pods left unbound and why").isEmpty();
    long kubeletDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (lockValue().isPresent() && System.nanoTime() < kubeletDeadline) {
      Thread.sleep(100);
    }
    assertThat(lockValue()).as("lock left after the last hand-off").isEmpty();
    Thread.sleep(500);
    stop.set(true);
    kubelet.cancel(true);
    watcher.cancel(true);

    // typed errors while it was down
    List<Attempt> duringOutage =
        attempts.stream().filter(a -> a.endNanos() > killedAt && a.startNanos() < readyAt).toList();
    assertThat(attempts).as("bind attempts").noneMatch(a -> a.outcome().equals("EXCEPTION"));
    assertThat(duringOutage).as("attempts during the outage").isNotEmpty();
    duringOutage.stream()
        .filter(a -> !a.outcome().equals(BindOutcome.BOUND.name()))
        .forEach(a -> assertThat(a.reason()).as("reason of a failed attempt").isNotBlank());

    // every node watch (one per replica, for all its keys) recovered: it relisted, or resumed from
    // its last resourceVersion when the
    // restarted server could still serve it (NodeLockWatch relists only on 410 or an ERROR event),
    // and is connected again; the waiters resumed (every pod bound, above)
    Map<String, Long> relistsAfter = relists();
    System.out.println(
        "[real-apiserver] lock-watch relists before the kill "
            + relistsBefore
            + ", after "
            + relistsAfter);
    long reconnectDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!watches().stream().allMatch(HamiStack.LockWatchState::connected)
        && System.nanoTime() < reconnectDeadline) {
      Thread.sleep(50);
    }
    assertThat(watches())
        .as("every lock watch connected again after the restart")
        .allMatch(HamiStack.LockWatchState::connected);

    // no two holders, no lock outliving the timeout
    List<Observed> h = new ArrayList<>(history);
    List<Optional<String>> values = h.stream().map(o -> Optional.ofNullable(o.value())).toList();
    List<String> overlaps = new ArrayList<>();
    for (int i = 1; i < values.size(); i++) {
      Optional<String> prev = values.get(i - 1);
      Optional<String> cur = values.get(i);
      if (prev.isPresent()
          && cur.isPresent()
          && !prev.equals(cur)
          && !sameOwner(prev.get(), cur.get())
          && !expiredTakeover(prev.get(), cur.get())) {
        overlaps.add("rv " + h.get(i).rv() + ": " + prev.get() + " -> " + cur.get());
      }
    }
    assertThat(h).as("lock history").hasSizeGreaterThanOrEqualTo(PODS);
    assertThat(overlaps).as("lock passed between owners without a release").isEmpty();
    long allowed = LOCK_TIMEOUT.plus(Duration.ofNanos(readyAt - killedAt)).plusSeconds(5).toNanos();
    long longest = 0;
    for (int i = 0; i < h.size() - 1; i++) {
      if (h.get(i).value() != null) {
        long life = h.get(i + 1).since() - h.get(i).since();
        longest = Math.max(longest, life);
        assertThat(life).as("lifetime of %s (ns)", h.get(i).value()).isLessThanOrEqualTo(allowed);
      }
    }
    long outageAttempts = duringOutage.size();
    System.out.printf(
        Locale.ROOT,
        "kill-test: %d bind attempts (%d during the outage: %s); %d lock values observed, "
            + "longest held %.1f s (allowed %.1f s); our watch relisted %d times; replicas' watches relisted %s -> %s%n",
        attempts.size(),
        outageAttempts,
        duringOutage.stream().map(a -> a.outcome()).distinct().toList(),
        h.stream().filter(o -> o.value() != null).count(),
        longest / 1e9,
        allowed / 1e9,
        watcherRelists.get(),
        relistsBefore,
        relistsAfter);
  }

  private List<HamiStack.LockWatchState> watches() {
    List<HamiStack.LockWatchState> out = new ArrayList<>();
    for (var replica : replicas) {
      out.addAll(replica.lockWatchStates());
    }
    return out;
  }

  private Map<String, Long> relists() {
    Map<String, Long> out = new LinkedHashMap<>();
    for (int r = 0; r < replicas.size(); r++) {
      for (HamiStack.LockWatchState w : replicas.get(r).lockWatchStates()) {
        out.put("replica-" + r + "/" + w.key(), w.relists());
      }
    }
    return out;
  }

  private static Optional<LockOwner> owner(String value) {
    try {
      return LockRecordCodec.parse(value).owner();
    } catch (MalformedLockException e) {
      return Optional.empty();
    }
  }

  private static boolean sameOwner(String a, String b) {
    Optional<LockOwner> oa = owner(a);
    Optional<LockOwner> ob = owner(b);
    return oa.isPresent() && ob.isPresent() && oa.get().isSameOwner(ob.get());
  }

  /**
   * A takeover is legitimate when the old value's timestamp is older than the timeout at the new
   * one's.
   */
  private static boolean expiredTakeover(String old, String next) {
    try {
      LockRecord o = LockRecordCodec.parse(old);
      LockRecord n = LockRecordCodec.parse(next);
      return !Duration.between(o.acquiredAt(), n.acquiredAt()).minus(LOCK_TIMEOUT).isNegative();
    } catch (MalformedLockException e) {
      return true; // a malformed value may be taken over at once (spec: takeover of malformed
      // locks)
    }
  }

  private Optional<String> lockValue() {
    return k8s.get("nodes", null, NODE)
        .map(n -> n.path("metadata").path("annotations").path(LOCK))
        .filter(JsonNode::isTextual)
        .map(JsonNode::asText);
  }

  /**
   * The kubelet: every second, HAMi's device plugin step for the node (hands devices out, releases
   * the lock).
   */
  private Object kubelet() throws InterruptedException {
    try (KubernetesHamiStack plugin =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(3)))
            .watch(false)
            .lockTimeout(LOCK_TIMEOUT)
            .build()) {
      while (!stop.get()) {
        try {
          plugin.devicePluginHandoff("NVIDIA").allocateAll(NODE);
        } catch (Exception e) {
          // the server is down: the next round retries
        }
        Thread.sleep(1000);
      }
    }
    return null;
  }

  /**
   * Our own record of the lock: LIST then WATCH of the node from the last resourceVersion; a
   * dropped stream resumes from it, a 410 or ERROR event relists. Appends each change of value.
   */
  private Object watchLock(ApiClient client, List<Observed> history, AtomicInteger relists) {
    String base = client.getBasePath();
    String rv = null;
    String last = "\u0000";
    while (!stop.get()) {
      try {
        if (rv == null) {
          relists.incrementAndGet();
          Request list =
              new Request.Builder()
                  .url(base + "/api/v1/nodes?fieldSelector=metadata.name%3D" + NODE)
                  .get()
                  .build();
          try (Response resp = client.getHttpClient().newCall(list).execute()) {
            if (resp.code() != 200) {
              throw new IllegalStateException("LIST " + resp.code());
            }
            JsonNode body = MAPPER.readTree(resp.body().string());
            rv = body.path("metadata").path("resourceVersion").asText();
            for (JsonNode n : body.path("items")) {
              last = record(history, last, rv, n);
            }
          }
        }
        Request watch =
            new Request.Builder()
                .url(
                    base
                        + "/api/v1/nodes?watch=true&allowWatchBookmarks=true"
                        + "&fieldSelector=metadata.name%3D"
                        + NODE
                        + "&resourceVersion="
                        + rv)
                .get()
                .build();
        Call call = client.getHttpClient().newCall(watch);
        try (Response resp = call.execute()) {
          if (resp.code() == 410) {
            rv = null;
            continue;
          }
          if (resp.code() != 200) {
            throw new IllegalStateException("WATCH " + resp.code());
          }
          BufferedReader r =
              new BufferedReader(
                  new InputStreamReader(resp.body().byteStream(), StandardCharsets.UTF_8));
          String line;
          while (!stop.get() && (line = r.readLine()) != null) {
            JsonNode ev = MAPPER.readTree(line);
            String type = ev.path("type").asText();
            if (type.equals("ERROR")) {
              rv = null;
              break;
            }
            String evRv = ev.path("object").path("metadata").path("resourceVersion").asText();
            if (!type.equals("BOOKMARK")) {
              last = record(history, last, evRv, ev.path("object"));
            }
            rv = evRv;
          }
        }
      } catch (Exception e) {
        try {
          Thread.sleep(200); // the server is down or restarting
        } catch (InterruptedException ie) {
          return null;
        }
      }
    }
    return null;
  }

  private static String record(List<Observed> history, String last, String rv, JsonNode node) {
    JsonNode v = node.path("metadata").path("annotations").path(LOCK);
    String value = v.isTextual() ? v.asText() : null;
    if (!Objects.equals(value, last)) {
      history.add(new Observed(rv, value, System.nanoTime()));
    }
    return value;
  }
}
