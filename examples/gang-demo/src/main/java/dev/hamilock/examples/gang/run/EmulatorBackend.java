package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The default backend: hami-lock-testkit's embedded Kubernetes API emulator (real HTTP, one global
 * revision, merge patches, bindings, watches) and, per endpoint, hami-lock-k8s's client-java parts
 * ({@link KubernetesEndpoints}: {@link KubernetesCluster} ports, node locks on {@code
 * hami.io/mutex.lock} with a node watch waking gang members) over its own {@code ApiClient}s — as
 * separate scheduler and device-plugin processes would have. The input is created in the emulator
 * from the manifests' own maps; request counts are the emulator's.
 */
public final class EmulatorBackend implements DemoBackend {
  private final ApiServerEmulator emulator;
  private final VendorRegistry registry;
  private KubernetesCluster verifier;

  /**
   * @param registry the vendors whose lock keys each endpoint's stack locks
   */
  public EmulatorBackend(VendorRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.emulator = ApiServerEmulator.start();
  }

  @Override
  public String description() {
    return "embedded Kubernetes API emulator at "
        + emulator.url()
        + " (hami-lock-testkit), client-java per endpoint";
  }

  @Override
  public void seed(DemoInput input) {
    for (DemoInput.NodeEntry n : input.nodes()) {
      emulator.create(n.object());
    }
    for (DemoInput.PodGroupEntry g : input.podGroups()) {
      ensureNamespace(g.namespace());
      emulator.create(g.object());
    }
    for (DemoInput.PodEntry p : input.pods()) {
      ensureNamespace(p.view().namespace());
      emulator.create(p.object());
    }
  }

  private void ensureNamespace(String ns) {
    if (emulator.get("namespaces", null, ns).isEmpty()) {
      emulator.createNamespace(ns);
    }
  }

  @Override
  public Endpoint endpoint(String name, boolean waitsForLocks) {
    return KubernetesEndpoints.of(
        name,
        emulator.newApiClient(Duration.ofSeconds(10)),
        emulator.newApiClient(Duration.ZERO),
        registry,
        waitsForLocks);
  }

  @Override
  public boolean simulatesDevicePlugins() {
    return true;
  }

  @Override
  public void resetCounters() {
    emulator.resetCounters();
  }

  @Override
  public Map<String, Long> requestsByVerb() {
    Map<String, Long> out = new TreeMap<>();
    emulator.requestCounts().forEach((k, v) -> out.merge(k.toString(), v, Long::sum));
    return out;
  }

  private synchronized KubernetesCluster verifier() {
    if (verifier == null) {
      verifier = KubernetesCluster.create(emulator.newApiClient(Duration.ofSeconds(10)));
    }
    return verifier;
  }

  @Override
  public List<ClusterPod> pods(DemoInput input) throws Exception {
    List<ClusterPod> out = new ArrayList<>();
    for (DemoInput.PodEntry p : input.pods()) {
      verifier().readPod(p.view().namespace(), p.view().name()).ifPresent(out::add);
    }
    return out;
  }

  @Override
  public List<NodeView> nodes(DemoInput input) throws Exception {
    List<NodeView> out = new ArrayList<>();
    for (DemoInput.NodeEntry n : input.nodes()) {
      verifier().readNode(n.view().name()).ifPresent(out::add);
    }
    return out;
  }

  @Override
  public void close() {
    emulator.close();
  }
}
