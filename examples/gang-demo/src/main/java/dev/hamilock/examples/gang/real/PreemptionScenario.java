package dev.hamilock.examples.gang.real;

import static dev.hamilock.examples.gang.real.RealSchedulerCluster.NS;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.testkit.RealApiServer;
import dev.hamilock.testkit.RequestKey;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.apis.SchedulingV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PriorityClass;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * HAMi#1527 on the real kube-scheduler (issue 26 item 4; {@code gang-demo --real-cluster --scenario
 * preemption}): GPU memory short, everything else free. {@link RealGpuNode#PREEMPTION} (node-p, one
 * A40 of 46068 MiB; labelled and tainted {@value #LABEL} so that only these pods land there, the
 * other nodes fail their node selector) runs three {@value #LOW} (priority 10) pods of 10000, 6000
 * and 30000 MiB, each Running before the next is created; the last, {@code low-kept}, is matched by
 * the PodDisruptionBudget {@value #BUDGET} ({@code minAvailable: 1}; no disruption controller runs,
 * so it allows no eviction). A {@value #HIGH} (priority 1000) pod asks for 15000 MiB:
 *
 * <ol>
 *   <li>through the extender without {@code --gpu-preemption} ({@link ExtenderMode#GANG_RETRY}):
 *       verified, its {@code PodScheduled} condition is {@code Unschedulable} with kube-scheduler
 *       v1.37.2's status naming the extender's {@code 1/1 CardInsufficientMemory} and ending {@code
 *       preemption: expected at least one victim pod on node "node-p"} (DefaultPreemption's dry run
 *       reprieves every pod, seeing no GPU shortage: k8s.io/kubernetes v1.37.2
 *       pkg/scheduler/framework/preemption/preemption.go), and no pod is being deleted. That status
 *       is written after the cycle's PostFilter, so it is kube-scheduler's whole verdict: nothing
 *       is waited for;
 *   <li>through the extender with it ({@link ExtenderMode#GPU_PREEMPTION}), timed from the pod's
 *       creation; once a victim is gone a {@value #LOW} pod of 30000 MiB, {@code low-late}, is
 *       created. Verified: exactly {@code low-a} and {@code low-b} evicted (the first plan, the
 *       least important {@code low-kept} alone, is refused by the Eviction API), {@code low-kept}
 *       not being deleted, the preemptor and {@code low-kept} bound through the extender, handed
 *       off and Running, no card over-committed ({@link RealSchedulerCluster#verify}), and {@code
 *       low-late} not bound: with the preemptor placed 1068 MiB are left, so a pod unbound now was
 *       never bound ({@code spec.nodeName} is never unset) — the reservation kept the freed slices
 *       from it;
 *   <li>with it still, on {@link RealGpuNode#PREEMPTION_GANG} (node-q, node-p's shape, labelled
 *       {@value #GANG_LABEL}, so the first half is untouched) holding {@value #LOW} pods of 20000,
 *       20000 and 5000 MiB: a PodGroup of two {@value #HIGH} members of 15000 MiB (as the gang
 *       scenarios create them), which fit only with both 20000 MiB pods gone. Verified: exactly
 *       {@code low-c} and {@code low-d} evicted ({@code low-e} reprieved; none when the gang was
 *       not placed), both members bound through the extender and Running, no card over-committed;
 *       timed from the PodGroup's creation, and the first {@code PodScheduled=False} condition
 *       kube-scheduler wrote on a member is recorded.
 * </ol>
 *
 * <p>Everything it creates (PriorityClasses, budget, node, pods) is deleted again.
 */
public final class PreemptionScenario {
  /** The {@code --scenario} value. */
  public static final String NAME = "preemption";

  /** The low-priority pods' PriorityClass (value 10). */
  static final String LOW = "gpu-low";

  /** The preemptor's PriorityClass (value 1000). */
  static final String HIGH = "gpu-high";

  /** The PodDisruptionBudget protecting {@code low-kept} (pods labelled {@code app: keep}). */
  static final String BUDGET = "keep";

  /** node-p's label (the pods' node selector) and taint (the pods tolerate it). */
  static final String LABEL = "hamilock.dev/test";

  /** The low-priority pods on node-p, in creation order, with their MiB of one card. */
  static final List<Map.Entry<String, Integer>> LOW_PODS =
      List.of(Map.entry("low-a", 10000), Map.entry("low-b", 6000), Map.entry("low-kept", 30000));

  private static final List<String> EXPECTED_VICTIMS = List.of("low-a", "low-b");

  /** The low-priority pods on node-q, for the gang half, with their MiB of one card. */
  static final List<Map.Entry<String, Integer>> GANG_LOW_PODS =
      List.of(Map.entry("low-c", 20000), Map.entry("low-d", 20000), Map.entry("low-e", 5000));

  /** Each gang member's MiB of one card. */
  static final int GANG_MEMBER_MIB = 15000;

  /** The gang's PodGroup (kube-scheduler 1.37's, minCount 2) and its members. */
  static final String GANG = "gang-p";

  private static final List<String> GANG_MEMBERS = List.of("gang-p-1", "gang-p-2");

  /** 2 × 15000 MiB fit only with both 20000 MiB pods gone; low-e (5000 MiB) is reprieved. */
  private static final List<String> GANG_VICTIMS = List.of("low-c", "low-d");

  /** node-q's label value (node-p's is {@value #NAME}). */
  private static final String GANG_LABEL = "preemption-gang";

  private static final Duration WAIT = Duration.ofSeconds(90);

  private PreemptionScenario() {}

  /**
   * Runs the scenario once on the cluster (after its gang scenarios: it starts the {@link
   * ExtenderMode#GPU_PREEMPTION} extender on first use, and points kube-scheduler's calls away from
   * the gang scenarios' extender).
   *
   * @param c the cluster
   * @return what the run showed; a step not reached within 90 s is a violation naming it
   * @throws Exception when the API server refuses a creation or the run is interrupted
   */
  public static PreemptionRun run(RealSchedulerCluster c) throws Exception {
    RealApiServer k8s = c.apiServer();
    String node = RealGpuNode.PREEMPTION.name();
    String nodeQ = RealGpuNode.PREEMPTION_GANG.name();
    String off = c.extender(ExtenderMode.GANG_RETRY).url();
    String on = c.extender(ExtenderMode.GPU_PREEMPTION).url(); // started before any clock
    double load =
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    SchedulingV1Api scheduling = new SchedulingV1Api(k8s.apiClient());
    List<String> violations = new ArrayList<>();
    String status = "";
    List<String> victims = new ArrayList<>();
    long runningMs = -1;
    Map<RequestKey, Long> counts = Map.of();
    Map<String, Long> calls = Map.of();
    List<String> gangVictims = new ArrayList<>();
    long gangRunningMs = -1;
    long gangEvictions = 0;
    String[] gangStatus = {""};
    try {
      for (Map.Entry<String, Integer> pc : Map.of(LOW, 10, HIGH, 1000).entrySet()) {
        scheduling
            .createPriorityClass(
                new V1PriorityClass()
                    .metadata(new V1ObjectMeta().name(pc.getKey()))
                    .value(pc.getValue()))
            .execute();
      }
      for (Map.Entry<String, String> n : Map.of(node, NAME, nodeQ, GANG_LABEL).entrySet()) {
        c.createNode(RealGpuNode.named(n.getKey()).orElseThrow());
        k8s.mutate(
            "nodes",
            null,
            n.getKey(),
            o -> {
              o.withObjectProperty("metadata")
                  .withObjectProperty("labels")
                  .put(LABEL, n.getValue());
              o.withObjectProperty("spec")
                  .putArray("taints")
                  .addObject()
                  .put("key", LABEL)
                  .put("value", n.getValue())
                  .put("effect", "NoSchedule");
              return o;
            });
      }
      k8s.create(
          """
          {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": "%s", "namespace": "%s"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "%s"}}}}
          """
              .formatted(BUDGET, NS, BUDGET));
      try (RealSchedulerCluster.DevicePlugins plugins =
          new RealSchedulerCluster.DevicePlugins(k8s, c.pods, List.of(node, nodeQ), true)) {
        c.proxy.target(off);
        for (Map.Entry<String, Integer> p : LOW_PODS) {
          createPod(k8s, p.getKey(), LOW, p.getValue(), NAME);
          await(() -> running(c, p.getKey()), p.getKey() + " Running");
        }
        for (Map.Entry<String, Integer> p : GANG_LOW_PODS) { // the gang half's, on node-q
          createPod(k8s, p.getKey(), LOW, p.getValue(), GANG_LABEL);
          await(() -> running(c, p.getKey()), p.getKey() + " Running");
        }
        createPod(k8s, "high-off", HIGH, 15000, NAME);
        await(
            () -> scheduled(c.pod("high-off")).path("reason").asText().equals("Unschedulable"),
            "high-off Unschedulable without --gpu-preemption");
        status = scheduled(c.pod("high-off")).path("message").asText();
        if (!status.contains("1/1 CardInsufficientMemory")
            || !status.endsWith(
                "preemption: expected at least one victim pod on node \"" + node + "\"")) {
          violations.add(
              "without --gpu-preemption, not kube-scheduler v1.37.2's status: " + status);
        }
        LOW_PODS.stream()
            .filter(p -> deleted(k8s, p.getKey()))
            .forEach(p -> violations.add(p.getKey() + " deleted without --gpu-preemption"));
        delete(k8s, "high-off");

        c.proxy.target(on);
        c.proxy.reset();
        k8s.resetCounters();
        long t0 = System.nanoTime();
        createPod(k8s, "high", HIGH, 15000, NAME);
        await(
            () -> EXPECTED_VICTIMS.stream().anyMatch(p -> k8s.get("pods", NS, p).isEmpty()),
            "a victim evicted with --gpu-preemption");
        createPod(k8s, "low-late", LOW, 30000, NAME);
        await(() -> running(c, "high"), "the preemptor Running with --gpu-preemption");
        runningMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        counts = k8s.requestCounts();
        calls = c.proxy.counts();
        LOW_PODS.stream().map(Map.Entry::getKey).filter(p -> deleted(k8s, p)).forEach(victims::add);
        if (!victims.equals(EXPECTED_VICTIMS)) {
          violations.add("victims " + victims + ", expected " + EXPECTED_VICTIMS);
        }
        violations.addAll(
            c.verify(
                java.util.stream.Stream.of("low-kept", "high")
                    .filter(p -> !deleted(k8s, p))
                    .toList(),
                plugins.served()));
        String late = c.pod("low-late").at("/spec/nodeName").asText();
        if (!late.isEmpty()) {
          violations.add("low-late bound to " + late + ": the freed slices were not reserved");
        }

        // the gang half: a PodGroup of 2 gpu-high members that fit node-q only with low-c and
        // low-d gone
        long g0 = System.nanoTime();
        long evictionsBefore =
            k8s.requestCounts().getOrDefault(new RequestKey("create", "pods/eviction"), 0L);
        createGang(k8s);
        try {
          await(
              () -> {
                if (gangStatus[0].isEmpty()) { // what kube-scheduler wrote while it was pending
                  for (String m : GANG_MEMBERS) {
                    JsonNode cond = scheduled(c.pod(m));
                    if (cond.path("status").asText().equals("False")) {
                      gangStatus[0] =
                          cond.path("reason").asText() + ": " + cond.path("message").asText();
                      break;
                    }
                  }
                }
                return GANG_MEMBERS.stream().allMatch(p -> running(c, p));
              },
              "both gang members Running with --gpu-preemption");
          gangRunningMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - g0);
        } catch (NotReached e) {
          violations.add(e.getMessage() + ": " + gangStatus(c));
        }
        gangEvictions =
            k8s.requestCounts().getOrDefault(new RequestKey("create", "pods/eviction"), 0L)
                - evictionsBefore;
        GANG_LOW_PODS.stream()
            .map(Map.Entry::getKey)
            .filter(p -> deleted(k8s, p))
            .forEach(gangVictims::add);
        if (gangRunningMs >= 0 ? !gangVictims.equals(GANG_VICTIMS) : !gangVictims.isEmpty()) {
          violations.add(
              "gang victims "
                  + gangVictims
                  + ", expected "
                  + (gangRunningMs >= 0 ? GANG_VICTIMS : "none (the gang not placed)"));
        }
        violations.addAll(
            c.verify(
                java.util.stream.Stream.concat(
                        GANG_LOW_PODS.stream().map(Map.Entry::getKey), GANG_MEMBERS.stream())
                    .filter(p -> !deleted(k8s, p))
                    .toList(),
                plugins.served()));
        violations.addAll(plugins.errors());
      }
    } catch (NotReached e) {
      violations.add(e.getMessage());
    } finally {
      for (String p : List.of("low-a", "low-b", "low-kept", "high-off", "high", "low-late")) {
        delete(k8s, p);
      }
      for (String p : GANG_MEMBERS) {
        delete(k8s, p);
      }
      for (Map.Entry<String, Integer> p : GANG_LOW_PODS) {
        delete(k8s, p.getKey());
      }
      ignoreMissing(
          () ->
              new CustomObjectsApi(k8s.apiClient())
                  .deleteNamespacedCustomObject(
                      "scheduling.k8s.io", "v1beta1", NS, "podgroups", GANG)
                  .execute());
      k8s.delete("nodes", null, node);
      k8s.delete("nodes", null, nodeQ);
      k8s.delete("poddisruptionbudgets", NS, BUDGET);
      for (String pc : List.of(LOW, HIGH)) {
        ignoreMissing(() -> scheduling.deletePriorityClass(pc).execute());
      }
    }
    return new PreemptionRun(
        status,
        victims,
        runningMs,
        counts.getOrDefault(new RequestKey("create", "pods/eviction"), 0L),
        counts.getOrDefault(new RequestKey("patch", "pods"), 0L),
        counts.getOrDefault(new RequestKey("create", "events"), 0L),
        calls,
        violations,
        load,
        gangVictims,
        gangRunningMs,
        gangEvictions,
        gangStatus[0]);
  }

  /**
   * The gang as the demo's gang scenarios create it on kube-scheduler 1.37 ({@link
   * RealSchedulerCluster#run}): a {@code scheduling.k8s.io/v1beta1} PodGroup with {@code
   * schedulingPolicy.gang.minCount} 2, members naming it in {@code
   * spec.schedulingGroup.podGroupName} and labelled {@code scheduling.x-k8s.io/pod-group}; the
   * PodGroup names the members' PriorityClass ({@value #HIGH}) too: without it the group's priority
   * is 0 and kube-scheduler v1.37.2 schedules none of them ({@code PodScheduled=False}, reason
   * {@code SchedulerError}: "all pods in a single pod group should have the same priority as the
   * pod group's priority, got 1000 and 0", {@code pkg/scheduler} validatePodGroup).
   */
  private static void createGang(RealApiServer k8s) throws ApiException {
    k8s.createPodGroup(NS, GANG, GANG_MEMBERS.size(), Map.of("priorityClassName", HIGH));
    for (String m : GANG_MEMBERS) {
      k8s.create(
          """
          {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "%s", "namespace": "%s",
            "labels": {"app": "%s", "scheduling.x-k8s.io/pod-group": "%s"}},
           "spec": {"schedulerName": "%s", "priorityClassName": "%s", "nodeSelector": {"%s": "%s"},
            "schedulingGroup": {"podGroupName": "%s"},
            "tolerations": [{"key": "%s", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "main", "image": "ubuntu:22.04", "resources":
             {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "%d"}}}]}}
          """
              .formatted(
                  m,
                  NS,
                  m,
                  GANG,
                  RealSchedulerCluster.SCHEDULER,
                  HIGH,
                  LABEL,
                  GANG_LABEL,
                  GANG,
                  LABEL,
                  GANG_MEMBER_MIB));
    }
  }

  /** Each gang member's node and PodScheduled condition, for a violation's message. */
  private static String gangStatus(RealSchedulerCluster c) {
    List<String> out = new ArrayList<>();
    for (String m : GANG_MEMBERS) {
      JsonNode p = c.pod(m);
      out.add(
          m
              + " node="
              + p.at("/spec/nodeName").asText("")
              + " phase="
              + p.at("/status/phase").asText()
              + " PodScheduled="
              + scheduled(p));
    }
    return String.join("; ", out);
  }

  /**
   * A pod asking for one GPU with {@code mib} of its memory, for the node labelled {@code label}
   * only.
   */
  private static void createPod(
      RealApiServer k8s, String name, String priorityClass, int mib, String label) {
    k8s.create(
        """
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "%s", "namespace": "%s", "labels": {"app": "%s"}},
         "spec": {"schedulerName": "%s", "priorityClassName": "%s", "nodeSelector": {"%s": "%s"},
          "tolerations": [{"key": "%s", "operator": "Exists", "effect": "NoSchedule"}],
          "containers": [{"name": "main", "image": "ubuntu:22.04", "resources":
           {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "%d"}}}]}}
        """
            .formatted(
                name,
                NS,
                name.equals("low-kept") ? BUDGET : name,
                RealSchedulerCluster.SCHEDULER,
                priorityClass,
                LABEL,
                label,
                LABEL,
                mib));
  }

  private static boolean running(RealSchedulerCluster c, String pod) {
    return c.pod(pod).at("/status/phase").asText().equals("Running");
  }

  /**
   * @return the pod's {@code PodScheduled} condition, a missing node when it has none yet
   */
  private static JsonNode scheduled(JsonNode pod) {
    for (JsonNode cond : pod.at("/status/conditions")) {
      if (cond.path("type").asText().equals("PodScheduled")) {
        return cond;
      }
    }
    return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
  }

  /**
   * @return whether the pod is gone or being deleted
   */
  private static boolean deleted(RealApiServer k8s, String pod) {
    return k8s.get("pods", NS, pod)
        .map(p -> p.at("/metadata/deletionTimestamp").isTextual())
        .orElse(true);
  }

  private static void delete(RealApiServer k8s, String pod) throws ApiException {
    ignoreMissing(
        () ->
            new CoreV1Api(k8s.apiClient())
                .deleteNamespacedPod(pod, NS)
                .gracePeriodSeconds(0)
                .execute());
  }

  private interface Call {
    Object call() throws ApiException;
  }

  private static void ignoreMissing(Call call) throws ApiException {
    try {
      call.call();
    } catch (ApiException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  /** A step not reached within {@link #WAIT}. */
  private static final class NotReached extends Exception {
    private static final long serialVersionUID = 1L;

    NotReached(String what) {
      super(what + ": not within " + WAIT.toSeconds() + " s");
    }
  }

  private static void await(BooleanSupplier done, String what) throws NotReached {
    long end = System.nanoTime() + WAIT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new NotReached(what);
      }
      RealSchedulerCluster.sleep(20);
    }
  }
}
