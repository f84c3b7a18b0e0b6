package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.manifest.Values;
import dev.hamilock.preflight.model.ContainerSpec;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.ManifestObject;
import dev.hamilock.preflight.model.PodTemplate;
import dev.hamilock.preflight.model.SchedulerConfiguration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the DRA checks (PF13…PF16) share: the resource names the HAMi extender serves, the pods it
 * serves, HAMi nodes, and Kubernetes' label-selector semantics. Field names follow {@code
 * k8s.io/api} {@code resource/v1/types.go} and {@code admissionregistration/v1/types.go}.
 */
public final class Dra {

  /** API group of DeviceClass and ResourceSlice ({@code resource.k8s.io/v1}). */
  static final String GROUP = "resource.k8s.io";

  /** HAMi's node registration annotation written by its NVIDIA device plugin. */
  static final String REGISTER_ANNOTATION = "hami.io/node-nvidia-register";

  /**
   * The label HAMi's device plugin DaemonSet selects nodes by ({@code gpu: "on"} in HAMi's chart;
   * HAMi-DRA's chart selects its kubelet plugin's nodes by the same label).
   */
  static final String GPU_LABEL = "gpu";

  private Dra() {}

  /**
   * The resource names the deployment's HAMi extenders serve: the {@code managedResources} of every
   * HAMi extender ({@link GpuResources#hamiExtenders}); HAMi's default NVIDIA names when no
   * configuration lists any.
   */
  static Set<String> servedNames(ManifestModel model) {
    Set<String> out = new LinkedHashSet<>();
    for (SchedulerConfiguration cfg : model.schedulerConfigurations()) {
      GpuResources.hamiExtenders(cfg).forEach(x -> out.addAll(x.managedResources()));
    }
    return out.isEmpty() ? new LinkedHashSet<>(GpuResources.ALL) : out;
  }

  /** Pods whose containers request or limit one of {@code served}. */
  static List<PodTemplate> servedPods(ManifestModel model, Set<String> served) {
    return model.podTemplates().stream()
        .filter(t -> t.containers().stream().anyMatch(c -> namesAny(c, served)))
        .toList();
  }

  private static boolean namesAny(ContainerSpec c, Set<String> names) {
    return names.stream().anyMatch(r -> c.limits().containsKey(r) || c.requests().containsKey(r));
  }

  /**
   * Whether a node runs HAMi, from the Node objects given: present when a Node of that name is
   * given (HAMi's when it carries {@value #REGISTER_ANNOTATION} or the label {@code gpu: "on"}),
   * empty when no Node of that name is given.
   */
  static Optional<Boolean> isHamiNode(ManifestModel model, String nodeName) {
    return model.objects("", "Node").stream()
        .filter(n -> n.name().equals(nodeName))
        .findFirst()
        .map(
            n ->
                n.annotations().containsKey(REGISTER_ANNOTATION)
                    || "on".equals(n.labels().get(GPU_LABEL)));
  }

  /**
   * The labels a namespace has: those of a given Namespace object, plus the {@code
   * kubernetes.io/metadata.name} label the API server sets on every namespace.
   */
  static Map<String, String> namespaceLabels(ManifestModel model, String namespace) {
    Map<String, String> labels = new java.util.LinkedHashMap<>();
    model.objects("", "Namespace").stream()
        .filter(n -> n.name().equals(namespace))
        .map(ManifestObject::labels)
        .forEach(labels::putAll);
    labels.put("kubernetes.io/metadata.name", namespace);
    return labels;
  }

  /**
   * Kubernetes' {@code metav1.LabelSelector} semantics ({@code LabelSelectorAsSelector}): an absent
   * or empty selector selects everything; {@code matchLabels} and every {@code matchExpressions}
   * entry must hold ({@code In}, {@code NotIn} — also true when the key is absent —, {@code
   * Exists}, {@code DoesNotExist}). An unknown operator (the API server rejects it) is read as
   * holding, so a hazard is reported rather than hidden (and the doctor's preemption plan keeps a
   * pod a PodDisruptionBudget may protect).
   */
  public static boolean selects(Object selector, Map<String, String> labels) {
    for (Map.Entry<String, String> e :
        Values.stringMap(Values.at(selector, "matchLabels")).entrySet()) {
      if (!e.getValue().equals(labels.get(e.getKey()))) {
        return false;
      }
    }
    for (Object x : Values.list(Values.at(selector, "matchExpressions"))) {
      String key = Values.string(Values.at(x, "key")).orElse("");
      List<String> values = Values.strings(Values.at(x, "values"));
      String value = labels.get(key);
      boolean holds =
          switch (Values.string(Values.at(x, "operator")).orElse("")) {
            case "In" -> value != null && values.contains(value);
            case "NotIn" -> value == null || !values.contains(value);
            case "Exists" -> value != null;
            case "DoesNotExist" -> value == null;
            default -> true;
          };
      if (!holds) {
        return false;
      }
    }
    return true;
  }
}
