package dev.hamilock.examples.gang;

import dev.hamilock.bind.ExtenderFilter;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.examples.gang.run.ClusterBackend;
import dev.hamilock.examples.gang.run.GangRun;
import dev.hamilock.examples.gang.run.ModeResult;
import dev.hamilock.k8s.view.KubernetesViews;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The {@code --kubeconfig} run: the same bind flow against a real cluster. The pods must exist and
 * be Pending and unbound (create them with a {@code schedulerName} no running scheduler serves, so
 * that nothing else binds them); the candidate nodes are the input's Node manifests, or else every
 * cluster node with a HAMi registration annotation. Nothing is simulated: HAMi's device plugin on
 * the node completes the hand-off and releases the node lock — unless {@code
 * --simulate-device-plugin} asks this process to play that plugin (a cluster without GPUs, such as
 * a bare kube-apiserver on etcd); then the run is verified as on the emulator (no overlapping
 * slices, no lock left; a violation is exit 2).
 *
 * <p>First prints what it will change — per pod the allocation annotations and label, the node
 * lock, the Binding — for the node the Filter would choose now; acts only with {@code --yes}
 * (otherwise exit 1). Only one strategy runs (the pods are bound afterwards): gang, or fail-fast
 * with {@code --mode fail-fast}.
 */
final class KubeconfigRun {
  private KubeconfigRun() {}

  static DemoResult run(
      DemoOptions options,
      VendorRegistry registry,
      RetryPolicy policy,
      DemoInput input,
      String summary,
      List<String> warnings) {
    Path path = options.kubeconfig().orElseThrow();
    Supplier<ApiClient> clients;
    ApiClient first;
    try {
      first = client(path);
      clients =
          () -> {
            try {
              return client(path);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          };
    } catch (IOException | RuntimeException e) {
      return failed(
          summary, warnings, List.of(), "cannot use kubeconfig " + path + ": " + e.getMessage());
    }
    List<String> notes = new ArrayList<>(warnings);
    try (ClusterBackend backend =
        new ClusterBackend(
            clients, registry, first.getBasePath(), options.simulateDevicePlugin())) {
      DemoInput in = input;
      if (input.sources().stream().anyMatch(s -> s.startsWith("built-in:nodes"))) {
        in = withClusterNodes(input, first, registry);
        summary = GangDemo.summary(in, options);
      }
      if (in.nodes().isEmpty()) {
        return failed(
            summary,
            notes,
            List.of(),
            "the cluster at "
                + first.getBasePath()
                + " has no node with a HAMi device registration annotation");
      }
      try {
        backend.seed(in);
      } catch (Exception e) {
        return failed(summary, notes, List.of(), e.getMessage());
      }
      List<String> plan =
          plan(
              in,
              registry,
              backend,
              options.yes(),
              first.getBasePath(),
              options.simulateDevicePlugin());
      if (!options.yes()) {
        return new DemoResult(
            GangDemo.EXIT_USER_ERROR,
            summary,
            notes,
            List.of(
                "refusing to change the cluster at "
                    + first.getBasePath()
                    + " without --yes (nothing was changed; the plan above says what would be)"),
            Optional.empty(),
            Optional.empty(),
            plan);
      }
      DemoOptions.Mode mode =
          options.mode() == DemoOptions.Mode.FAIL_FAST
              ? DemoOptions.Mode.FAIL_FAST
              : DemoOptions.Mode.GANG;
      if (options.mode() == DemoOptions.Mode.BOTH) {
        notes.add("on a real cluster only one strategy runs (the pods are bound afterwards): gang");
      }
      GangRun runner =
          new GangRun(
              registry,
              new GangRun.Settings(
                  options.replicas(), options.allocateMs(), policy, options.backoffScale(), 6));
      ModeResult m = runner.run(in, mode, backend);
      List<String> errors = new ArrayList<>();
      int code = GangDemo.EXIT_OK;
      if (!m.violations().isEmpty() || !m.locksLeft().isEmpty()) {
        errors.add(
            mode.flag()
                + " run: the verification failed: "
                + String.join("; ", m.violations())
                + (m.locksLeft().isEmpty() ? "" : " locks left held: " + m.locksLeft()));
        code = GangDemo.EXIT_INTERNAL_ERROR;
      } else if (!m.allBound()) {
        errors.add(
            "not every pod was bound: "
                + String.join(
                    "; ",
                    m.members().stream()
                        .filter(x -> !x.bound())
                        .map(x -> x.pod() + " " + x.result() + " (" + x.reason() + ")")
                        .toList()));
        code = GangDemo.EXIT_USER_ERROR;
      }
      return new DemoResult(
          code,
          summary,
          notes,
          errors,
          mode == DemoOptions.Mode.GANG ? Optional.of(m) : Optional.empty(),
          mode == DemoOptions.Mode.FAIL_FAST ? Optional.of(m) : Optional.empty(),
          plan);
    } catch (Exception e) {
      return new DemoResult(
          GangDemo.EXIT_INTERNAL_ERROR,
          summary,
          notes,
          List.of("the run failed: " + e),
          Optional.empty(),
          Optional.empty(),
          List.of());
    }
  }

  private static ApiClient client(Path path) throws IOException {
    try (Reader r = Files.newBufferedReader(path)) {
      return ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(r)).build();
    }
  }

  private static DemoResult failed(
      String summary, List<String> warnings, List<String> plan, String error) {
    return new DemoResult(
        GangDemo.EXIT_USER_ERROR,
        summary,
        warnings,
        List.of(error),
        Optional.empty(),
        Optional.empty(),
        plan);
  }

  private static DemoInput withClusterNodes(
      DemoInput input, ApiClient client, VendorRegistry registry) throws Exception {
    List<DemoInput.NodeEntry> nodes = new ArrayList<>();
    for (V1Node n : new CoreV1Api(client).listNode().execute().getItems()) {
      NodeView view = KubernetesViews.nodeView(n);
      if (registry.vendors().stream().anyMatch(v -> v.isRegisteredOn(view))) {
        nodes.add(new DemoInput.NodeEntry(stub(view.name()), Map.of(), view));
      }
    }
    List<String> sources = new ArrayList<>();
    input.sources().stream().filter(s -> !s.startsWith("built-in:nodes")).forEach(sources::add);
    sources.add("cluster:" + client.getBasePath() + " (its nodes with a HAMi registration)");
    List<dev.hamilock.preflight.manifest.ManifestDocument> docs =
        input.documents().stream().filter(d -> !d.source().startsWith("built-in:nodes")).toList();
    return new DemoInput(sources, docs, input.pods(), input.podGroups(), nodes, input.notes());
  }

  private static dev.hamilock.preflight.manifest.ManifestDocument stub(String name)
      throws ManifestException {
    return ManifestLoader.parse(
            "cluster",
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\""
                + name.replace("\"", "")
                + "\"}}")
        .get(0);
  }

  private static List<String> plan(
      DemoInput in,
      VendorRegistry registry,
      ClusterBackend backend,
      boolean yes,
      String server,
      boolean simulated)
      throws Exception {
    String verb = yes ? "will" : "would";
    List<String> out = new ArrayList<>();
    out.add(
        "plan for the cluster at "
            + server
            + " ("
            + (yes ? "--yes given: acting" : "dry run: nothing changed")
            + "):");
    ExtenderFilter filter = ExtenderFilter.builder(backend.reader(), registry).build();
    Map<String, NodeUsage> usage =
        new LinkedHashMap<>(
            filter.readUsage(
                in.nodes().stream().map(n -> n.view().name()).toList(), Optional.empty()));
    TreeSet<String> lockNodes = new TreeSet<>();
    for (DemoInput.PodEntry p : in.pods()) {
      FilterDecision d = filter.decide(p.view(), usage.values());
      if (d.failure().isPresent()) {
        out.add(
            "  pod " + p.view().key() + ": cannot be scheduled: " + d.failure().get().message());
        continue;
      }
      String node = d.node().orElse("(no node fits now: " + d.failedNodes() + ")");
      TreeSet<String> keys =
          new TreeSet<>(
              List.of(
                  HamiAnnotations.VGPU_NODE,
                  HamiAnnotations.VGPU_TIME,
                  HamiAnnotations.BIND_PHASE,
                  HamiAnnotations.BIND_TIME));
      for (DeviceVendor v : registry.vendors()) {
        if (d.devices().map(x -> x.byVendor().containsKey(v.commonWord())).orElse(false)) {
          keys.add(v.toAllocateAnnotationKey());
          keys.add(v.allocatedAnnotationKey());
          v.nodeLockKey().ifPresent(k -> lockNodes.add(d.node().orElse("?") + " " + k));
        }
      }
      out.add(
          "  "
              + verb
              + " PATCH pod "
              + p.view().key()
              + ": annotations "
              + String.join(", ", keys)
              + "; label "
              + HamiAnnotations.VGPU_NODE
              + " (Filter, then again under the node lock)");
      out.add(
          "  "
              + verb
              + " POST pods/"
              + p.view().name()
              + "/binding in "
              + p.view().namespace()
              + " -> node "
              + node
              + d.devices().map(x -> " with " + x.byVendor()).orElse(""));
    }
    for (String l : lockNodes) {
      String[] nk = l.split(" ", 2);
      out.add(
          "  "
              + verb
              + " PATCH node "
              + nk[0]
              + ": annotation "
              + nk[1]
              + " (taken by each bind, released by the "
              + (simulated
                  ? "simulated device plugin in this process (--simulate-device-plugin)"
                  : "HAMi device plugin on the node")
              + " after Allocate, or expiring after 5 min)");
    }
    return out;
  }
}
