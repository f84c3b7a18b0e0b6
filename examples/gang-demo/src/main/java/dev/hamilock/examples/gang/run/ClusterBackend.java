package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.k8s.bind.KubernetesCluster;
import io.kubernetes.client.openapi.ApiClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A real cluster reached through a kubeconfig: nothing is created; {@link #seed} checks that every
 * input pod exists and is not bound yet and that every node exists. No device plugin is simulated —
 * HAMi's plugin on the node completes the hand-off and releases the node lock — unless asked to
 * ({@code --simulate-device-plugin}, for a cluster without GPUs or HAMi's plugin): then the run's
 * own simulated plugins do, as on the emulator. Requests are not counted.
 */
public final class ClusterBackend implements DemoBackend {
  private final Supplier<ApiClient> clients;
  private final VendorRegistry registry;
  private final String server;
  private final KubernetesCluster reader;
  private final boolean simulatePlugins;

  /**
   * @param clients makes a new client per endpoint (from the kubeconfig)
   * @param registry the vendors
   * @param server the API server URL, for the report
   */
  public ClusterBackend(Supplier<ApiClient> clients, VendorRegistry registry, String server) {
    this(clients, registry, server, false);
  }

  /**
   * @param clients makes a new client per endpoint (from the kubeconfig)
   * @param registry the vendors
   * @param server the API server URL, for the report
   * @param simulatePlugins whether the run simulates the device plugins (the cluster has none)
   */
  public ClusterBackend(
      Supplier<ApiClient> clients,
      VendorRegistry registry,
      String server,
      boolean simulatePlugins) {
    this.simulatePlugins = simulatePlugins;
    this.clients = Objects.requireNonNull(clients, "clients");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.server = Objects.requireNonNull(server, "server");
    this.reader = KubernetesCluster.create(clients.get());
  }

  @Override
  public String description() {
    return "cluster at "
        + server
        + " (--kubeconfig), client-java per endpoint, "
        + (simulatePlugins
            ? "simulated device plugin per node (--simulate-device-plugin)"
            : "no simulated device plugin");
  }

  @Override
  public void seed(DemoInput input) throws Exception {
    for (DemoInput.PodEntry p : input.pods()) {
      ClusterPod cp =
          reader
              .readPod(p.view().namespace(), p.view().name())
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "pod "
                              + p.view().key()
                              + " does not exist in the cluster: create it first (kubectl apply -f ...)"));
      if (cp.isBound()) {
        throw new IllegalStateException(
            "pod " + p.view().key() + " is already bound to " + cp.nodeName().get());
      }
    }
    for (DemoInput.NodeEntry n : input.nodes()) {
      if (reader.readNode(n.view().name()).isEmpty()) {
        throw new IllegalStateException(
            "node " + n.view().name() + " does not exist in the cluster");
      }
    }
  }

  @Override
  public Endpoint endpoint(String name, boolean waitsForLocks) {
    return KubernetesEndpoints.of(name, clients.get(), null, registry, waitsForLocks);
  }

  /**
   * @return the reader used for checks (fresh reads)
   */
  public KubernetesCluster reader() {
    return reader;
  }

  @Override
  public boolean simulatesDevicePlugins() {
    return simulatePlugins;
  }

  @Override
  public void resetCounters() {}

  @Override
  public Map<String, Long> requestsByVerb() {
    return Map.of();
  }

  @Override
  public List<ClusterPod> pods(DemoInput input) throws Exception {
    List<ClusterPod> out = new ArrayList<>();
    for (DemoInput.PodEntry p : input.pods()) {
      reader.readPod(p.view().namespace(), p.view().name()).ifPresent(out::add);
    }
    return out;
  }

  @Override
  public List<NodeView> nodes(DemoInput input) throws Exception {
    List<NodeView> out = new ArrayList<>();
    for (DemoInput.NodeEntry n : input.nodes()) {
      reader.readNode(n.view().name()).ifPresent(out::add);
    }
    return out;
  }

  @Override
  public void close() {}
}
