package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.DraDriver;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.GpuPolicy;
import dev.hamilock.device.spi.InvalidResourceRequestException;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.VendorRegistrationException;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * The kind of {@code UncheckedPortAnywhereTest} for the other extension point users plug in: a
 * {@link DeviceVendor} (ServiceLoader or {@link VendorRegistry.Builder#register}) whose method
 * throws an unchecked exception (a bug) at the n-th call. A bind, a Filter and a hand-off each
 * return a typed answer, leave no lock or bind phase unreported, and never treat a node whose usage
 * could not be read as free: here a Running pod already uses 12000 of the node's one 15360 MiB
 * card, so a pod asking 4000 MiB placed on it is an over-commit.
 */
class UncheckedVendorAnywhereTest {
  private static final String PHASE = "hami.io/bind-phase";
  private static final int MAX_CALL = 6;

  /** The methods thrown at so far in the current test. */
  private static final Set<String> HIT = ConcurrentHashMap.newKeySet();

  private static final DeviceVendor NVIDIA = Fixtures.REGISTRY.vendor("NVIDIA").orElseThrow();

  /** The vendor methods a flow calls with pod or node data. */
  private static final Set<String> METHODS =
      Set.of(
          "needsLock",
          "parseRequest",
          "isRegisteredOn",
          "ownsDeviceType",
          "decodeNodeDevices",
          "fit",
          "encodeAllocation",
          "decodeAllocated",
          "scoreNode");

  /** NVIDIA, throwing at the {@code n}-th call of {@code method} (0: at every call). */
  private static final class Buggy implements DeviceVendor {
    final String method;
    final int n;
    final AtomicInteger calls = new AtomicInteger();

    Buggy(String method, int n) {
      this.method = method;
      this.n = n;
    }

    void at(String m) {
      if (m.equals(method) && (calls.incrementAndGet() == n || n == 0)) {
        HIT.add(m);
        throw new IllegalStateException("injected vendor bug at call " + n + " of " + m);
      }
    }

    @Override
    public String commonWord() {
      return NVIDIA.commonWord();
    }

    @Override
    public VendorConfig defaultConfig() {
      return NVIDIA.defaultConfig();
    }

    @Override
    public Optional<String> nodeLockKey() {
      return NVIDIA.nodeLockKey();
    }

    @Override
    public String registrationAnnotationKey() {
      return NVIDIA.registrationAnnotationKey();
    }

    @Override
    public String toAllocateAnnotationKey() {
      return NVIDIA.toAllocateAnnotationKey();
    }

    @Override
    public String allocatedAnnotationKey() {
      return NVIDIA.allocatedAnnotationKey();
    }

    @Override
    public boolean needsLock(PodView pod, VendorConfig config) {
      at("needsLock");
      return NVIDIA.needsLock(pod, config);
    }

    @Override
    public Optional<ContainerDeviceRequest> parseRequest(
        ContainerView container, VendorConfig config) throws InvalidResourceRequestException {
      at("parseRequest");
      return NVIDIA.parseRequest(container, config);
    }

    @Override
    public boolean isRegisteredOn(NodeView node) {
      at("isRegisteredOn");
      return NVIDIA.isRegisteredOn(node);
    }

    @Override
    public boolean ownsDeviceType(String deviceType) {
      at("ownsDeviceType");
      return NVIDIA.ownsDeviceType(deviceType);
    }

    @Override
    public List<DeviceInfo> decodeNodeDevices(NodeView node) throws DeviceAnnotationException {
      at("decodeNodeDevices");
      return NVIDIA.decodeNodeDevices(node);
    }

    @Override
    public ContainerFit fit(
        List<DeviceUsage> devices, ContainerDeviceRequest request, FitContext context) {
      at("fit");
      return NVIDIA.fit(devices, request, context);
    }

    @Override
    public Map<String, String> encodeAllocation(List<List<ContainerDevice>> containers) {
      at("encodeAllocation");
      return NVIDIA.encodeAllocation(containers);
    }

    @Override
    public Optional<List<List<ContainerDevice>>> decodeAllocated(PodView pod)
        throws DeviceAnnotationException {
      at("decodeAllocated");
      return NVIDIA.decodeAllocated(pod);
    }

    @Override
    public List<DraDriver> draDrivers() {
      at("draDrivers");
      return NVIDIA.draDrivers();
    }

    @Override
    public double scoreNode(
        NodeView node,
        List<DeviceUsage> vendorDevices,
        List<List<ContainerDevice>> chosen,
        GpuPolicy policy) {
      at("scoreNode");
      return NVIDIA.scoreNode(node, vendorDevices, chosen, policy);
    }
  }

  private static VendorRegistry registry(Buggy v) {
    return VendorRegistry.builder().register(v).build();
  }

  private static void everyCall(
      String what, Set<String> expectReached, BiFunction<Buggy, String, Optional<String>> once) {
    List<String> wrong = new ArrayList<>();
    HIT.clear();
    try (LogCapture log = LogCapture.start()) {
      for (String m : METHODS) {
        for (int n = 1; n <= MAX_CALL; n++) {
          Buggy v = new Buggy(m, n);
          String run = "call %d of %s".formatted(n, m);
          Optional<String> w;
          try {
            w = once.apply(v, run);
          } catch (RuntimeException e) {
            w = Optional.of(run + ": " + what + " threw " + e);
          }
          w.ifPresent(wrong::add);
        }
      }
      log.expect("WARN dev\\.hamilock\\.");
    }
    assertThat(new TreeSet<>(HIT))
        .as("the methods %s reached and threw at", what)
        .containsAll(expectReached);
    assertThat(wrong).isEmpty();
  }

  /** Read once, at registration: a bug there is a typed registration error, before any flow. */
  @Test
  void aVendorsUncheckedExceptionInItsDraDriversFailsItsRegistration() {
    assertThatThrownBy(() -> registry(new Buggy("draDrivers", 1)))
        .isInstanceOf(VendorRegistrationException.class)
        .hasMessageContaining("injected vendor bug");
  }

  /**
   * A vendor failing the same way at every call warns once, then logs at DEBUG: a Filter calls a
   * vendor per node for every pod, and a WARN per call buried the logs (one WARN per failure kind:
   * method and exception class).
   */
  @Test
  void aVendorFailingAtEveryCallWarnsOnce() {
    DeviceVendor v = registry(new Buggy("needsLock", 0)).vendor("NVIDIA").orElseThrow();
    try (LogCapture log = LogCapture.start()) {
      for (String name : List.of("p", "q", "p")) {
        PodView pod = PodView.builder("default", name).build();
        assertThat(v.needsLock(pod, v.defaultConfig())).as("fails closed: locks").isTrue();
      }
      assertThat(log.expect("WARN dev\\.hamilock\\.device\\.spi\\.CheckedVendor - .*needsLock"))
          .singleElement()
          .asString()
          .contains("needsLock of pod default/p", "injected vendor bug");
    }
  }

  /** A node of one 15360 MiB card with a Running pod on it using 12000 MiB. */
  private static InMemoryCluster nearlyFullNode() {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 1, 15360));
    return cluster;
  }

  @Test
  void aVendorsUncheckedExceptionAtAnyCallOfAFilterIsAFailedDecisionNeverAnOverCommit() {
    everyCall(
        "a Filter",
        Set.of(
            "parseRequest",
            "decodeNodeDevices",
            "fit",
            "decodeAllocated",
            "isRegisteredOn",
            "ownsDeviceType",
            "encodeAllocation",
            "scoreNode"),
        this::filterOnce);
  }

  private Optional<String> filterOnce(Buggy v, String run) {
    return filterOnce(v, run, true)
        .or(() -> filterOnce(new Buggy(v.method, v.n), run + " on a free card", false));
  }

  private Optional<String> filterOnce(Buggy v, String run, boolean full) {
    InMemoryCluster cluster = nearlyFullNode();
    Fixtures.addServedPodOn(cluster, Fixtures.gpu("n1", 0), full ? 12000 : 1000);
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    FilterDecision d =
        ExtenderFilter.builder(cluster, registry(v))
            .writeAnnotations(cluster)
            .build()
            .filter(p1, List.of("n1"));
    boolean written = annotations(cluster, "p1").containsKey("hami.io/vgpu-node");
    if (d.node().isPresent()) {
      return full
          ? Optional.of(run + ": over-commit, the Filter chose " + d.node().get() + ": " + d)
          : written ? Optional.empty() : Optional.of(run + ": chosen, not written: " + d);
    }
    return !written && (d.failure().isPresent() || !d.failedNodes().isEmpty())
        ? Optional.empty()
        : Optional.of(run + ": " + d + ", annotations written " + written);
  }

  @Test
  void aVendorsUncheckedExceptionAtAnyCallOfABindLeavesNothingBehindAndNeverOverCommits() {
    everyCall(
        "a bind",
        Set.of(
            "needsLock",
            "parseRequest",
            "decodeNodeDevices",
            "decodeAllocated",
            "fit",
            "encodeAllocation"),
        this::bindOnce);
  }

  /** p1 filtered onto the free card, then "other" started there: the re-fit must refuse p1. */
  private Optional<String> bindOnce(Buggy v, String run) {
    return bindOnce(v, run, true)
        .or(() -> bindOnce(new Buggy(v.method, v.n), run + " on a free card", false));
  }

  private Optional<String> bindOnce(Buggy v, String run, boolean full) {
    InMemoryCluster cluster = nearlyFullNode();
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    Fixtures.addServedPodOn(cluster, Fixtures.gpu("n1", 0), full ? 12000 : 1000);
    BindResult r =
        PodBinder.builder(cluster, cluster, registry(v), Fixtures.locks(cluster))
            .clock(Fixtures.CLOCK)
            .retryPolicy(Fixtures.RETRY)
            .build()
            .bind(NS, "p1", p1.uid(), "n1");
    Map<String, String> left = annotations(cluster, "p1");
    boolean bound =
        cluster.pods().stream()
            .anyMatch(p -> p.view().name().equals("p1") && p.nodeName().isPresent());
    String lock = lockValue(cluster, "n1");
    boolean reported = r.locksHeld() && !r.cleanupProblems().isEmpty();
    if (bound || r.outcome() == BindOutcome.BOUND) {
      return full
          ? Optional.of(run + ": over-commit, p1 bound: " + r.outcome() + " " + r.reason())
          : bound && r.outcome() == BindOutcome.BOUND
              ? Optional.empty()
              : Optional.of(run + ": " + r.outcome() + ", bound " + bound);
    }
    return r.outcome() != BindOutcome.UNKNOWN
            && ((lock != null && !reported) || (left.containsKey(PHASE) && !reported))
        ? Optional.of(
            "%s: %s (%s) left the lock %s, bind phase %s"
                .formatted(run, r.outcome(), r.reason(), lock, left.get(PHASE)))
        : Optional.empty();
  }
}
