package dev.hamilock.examples.gang.input;

import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.examples.gang.input.DemoInput.PodEntry;
import dev.hamilock.examples.gang.input.DemoInput.PodGroupEntry;
import dev.hamilock.preflight.Preflight;
import dev.hamilock.preflight.PreflightReport;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.manifest.ManifestException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The checks made before binding, on the input alone:
 *
 * <ul>
 *   <li>the preflight module's standard checks ({@link Preflight#standard()}), among them the
 *       guide's pitfalls PF05 (pod-group key under {@code metadata.annotations}: the pods are not
 *       gang members), PF06 (fewer pods than {@code minMember}) and PF09 (musl image with HAMi
 *       resources: {@code libdl.so.2: cannot open shared object file});
 *   <li>quorum: a PodGroup with at least one labelled member but fewer than {@code minMember} never
 *       passes Coscheduling's Permit, so the demo reports it instead of binding;
 *   <li>fit: each pod is fitted alone on every input node with the node's current usage (HAMi's
 *       Filter, {@link PodFitter}); a pod that fits nowhere gets HAMi's reason per node.
 * </ul>
 */
public final class InputChecks {

  /**
   * What the checks found.
   *
   * @param findings every preflight finding, sorted by check id
   * @param notGangMembers PodGroup name to the pods that name it under {@code metadata.annotations}
   *     (PF05): they schedule one by one
   * @param quorum one line per PodGroup that can never reach quorum, in Coscheduling's words
   * @param unfittable pod key to (node to HAMi's reason) for pods that fit on no node
   */
  public record Result(
      List<Finding> findings,
      Map<String, List<String>> notGangMembers,
      List<String> quorum,
      Map<String, Map<String, String>> unfittable) {
    /** Copies. */
    public Result {
      findings = List.copyOf(findings);
      notGangMembers = Map.copyOf(notGangMembers);
      quorum = List.copyOf(quorum);
      unfittable = Map.copyOf(unfittable);
    }

    /**
     * @return whether binding must not start (quorum or fit problems)
     */
    public boolean blocksBinding() {
      return !quorum.isEmpty() || !unfittable.isEmpty();
    }

    /**
     * @param checkId e.g. {@code PF09}
     * @return the findings of that check
     */
    public List<Finding> findings(String checkId) {
      return findings.stream().filter(f -> f.checkId().equals(checkId)).toList();
    }
  }

  private final VendorRegistry registry;

  /**
   * @param registry the vendors used for fitting
   */
  public InputChecks(VendorRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /**
   * Runs every check.
   *
   * @param input the input
   * @return the findings
   * @throws InputException if an embedded scheduler configuration in the input is not valid YAML
   */
  public Result check(DemoInput input) throws InputException {
    PreflightReport report;
    try {
      report = Preflight.standard().check(input.documents());
    } catch (ManifestException e) {
      throw new InputException(e.source(), e.documentNumber(), "", e.problem(), e);
    }
    Map<String, List<String>> annotated = new LinkedHashMap<>();
    for (PodEntry p : input.pods()) {
      String g = p.view().annotations().get(PodEntry.POD_GROUP_LABEL);
      if (g != null && p.podGroupLabel().isEmpty()) {
        annotated.computeIfAbsent(g, k -> new ArrayList<>()).add(p.view().key());
      }
    }
    List<String> quorum = new ArrayList<>();
    for (PodGroupEntry g : input.podGroups()) {
      int members = input.members(g).size();
      if (members > 0 && members < g.minMember()) {
        quorum.add(
            "PodGroup "
                + g.namespace()
                + "/"
                + g.name()
                + " can never reach quorum: cannot find enough sibling "
                + "pods, current pods number: "
                + members
                + ", minMember of group: "
                + g.minMember()
                + " (Coscheduling's Permit holds its members until the timeout; nothing would be bound)");
      }
    }
    return new Result(report.findings(), annotated, quorum, unfittable(input));
  }

  private Map<String, Map<String, String>> unfittable(DemoInput input) {
    UsageReconstructor usage = new UsageReconstructor(registry);
    PodFitter fitter = PodFitter.create(registry);
    List<NodeView> nodes = input.nodes().stream().map(DemoInput.NodeEntry::view).toList();
    List<PodView> pods = input.pods().stream().map(PodEntry::view).toList();
    List<NodeUsage> snapshot = new ArrayList<>(usage.clusterUsage(nodes, pods).values());
    Map<String, Map<String, String>> out = new LinkedHashMap<>();
    for (PodView p : pods) {
      try {
        FilterResult r = fitter.filter(p, snapshot);
        if (r.devicesRequested() && r.best().isEmpty()) {
          out.put(
              p.key(),
              r.failedNodes().isEmpty()
                  ? Map.of("(no node)", "no node in the input")
                  : r.failedNodes());
        }
      } catch (InvalidPodRequestException e) {
        out.put(p.key(), Map.of("(request)", e.getMessage())); // already rejected by the loader
      }
    }
    return out;
  }
}
