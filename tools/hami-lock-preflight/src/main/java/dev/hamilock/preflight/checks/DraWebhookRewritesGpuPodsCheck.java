package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Values;
import dev.hamilock.preflight.manifest.YamlPath;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.ManifestObject;
import dev.hamilock.preflight.model.PodTemplate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * PF15 {@code dra-webhook-rewrites-gpu-pods}: a DRA driver's mutating webhook that would rewrite
 * the pods the HAMi extender serves. HAMi-DRA's {@code mutate.hami.io} (Project-HAMi/HAMi-DRA
 * {@code charts/hami-dra/templates/webhook/mutatingwebhookconfiguration.yaml}) strips {@code
 * nvidia.com/gpu}/{@code gpumem}/{@code gpucores} from every created pod and adds a ResourceClaim,
 * so the DRA allocator allocates it beside HAMi's own allocations. ERROR for a {@code
 * MutatingWebhookConfiguration} webhook ({@code admissionregistration.k8s.io/v1}) when
 *
 * <ul>
 *   <li>{@code dra} is a word (split at non-alphanumerics) of the configuration's name, the
 *       webhook's name or its {@code clientConfig.service.name} (HAMi-DRA's is {@code
 *       <release>-dra-webhook}; HAMi's own {@code vgpu.hami.io} is not);
 *   <li>a rule matches pods on CREATE ({@code operations} {@code CREATE}/{@code *}, {@code
 *       apiGroups} {@code ""}/{@code *}, {@code resources} {@code pods}/{@code *}/{@code *}{@code
 *       /*});
 *   <li>its {@code namespaceSelector} and {@code objectSelector} select a pod the extender serves
 *       ({@link Dra#servedPods}, {@link Dra#namespaceLabels}; unset namespace {@code default}), or
 *       without such pods a pod without labels in {@code default}.
 * </ul>
 */
public final class DraWebhookRewritesGpuPodsCheck extends AbstractCheck {

  private static final String DEFAULT_NAMESPACE = "default";

  /** Creates the check. */
  public DraWebhookRewritesGpuPodsCheck() {
    super(
        "PF15",
        "dra-webhook-rewrites-gpu-pods",
        "No DRA driver's mutating webhook may rewrite pods the HAMi extender serves.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<PodTemplate> pods = Dra.servedPods(model, Dra.servedNames(model));
    List<Finding> out = new ArrayList<>();
    for (ManifestObject cfg :
        model.objects("admissionregistration.k8s.io", "MutatingWebhookConfiguration")) {
      List<Object> hooks = Values.list(cfg.root().get("webhooks"));
      for (int i = 0; i < hooks.size(); i++) {
        Object hook = hooks.get(i);
        String hookName = Values.string(Values.at(hook, "name")).orElse("");
        boolean dra =
            isDraWord(cfg.name())
                || isDraWord(hookName)
                || isDraWord(
                    Values.string(Values.at(hook, "clientConfig", "service", "name")).orElse(""));
        if (!dra || !createsPods(hook)) {
          continue;
        }
        Set<String> hit = selectedPods(model, hook, pods);
        if (hit.isEmpty()) {
          continue;
        }
        out.add(
            finding(
                Severity.ERROR,
                cfg.location(YamlPath.index("webhooks", i)),
                "DRA webhook "
                    + hookName
                    + " of "
                    + cfg.describe()
                    + " mutates pods on CREATE in "
                    + String.join(", ", hit)
                    + ", pods the HAMi extender serves: a DRA driver's webhook turns their GPU"
                    + " resources into ResourceClaims (HAMi-DRA's mutate.hami.io does), so the"
                    + " extender no longer sees them and the DRA allocator places them on cards"
                    + " HAMi also allocates.",
                "Keep the DRA webhook out of the namespaces HAMi serves (namespaceSelector, e.g."
                    + " HAMi-DRA's webhook.config.scope.excludedNamespaces, or an objectSelector),"
                    + " or do not install it beside the HAMi extender."));
      }
    }
    return out;
  }

  private static boolean isDraWord(String name) {
    return Arrays.asList(name.toLowerCase(Locale.ROOT).split("[^a-z0-9]+")).contains("dra");
  }

  private static boolean createsPods(Object hook) {
    for (Object rule : Values.list(Values.at(hook, "rules"))) {
      List<String> ops = Values.strings(Values.at(rule, "operations"));
      List<String> groups = Values.strings(Values.at(rule, "apiGroups"));
      List<String> resources = Values.strings(Values.at(rule, "resources"));
      if ((ops.contains("CREATE") || ops.contains("*"))
          && (groups.contains("") || groups.contains("*"))
          && (resources.contains("pods") || resources.contains("*") || resources.contains("*/*"))) {
        return true;
      }
    }
    return false;
  }

  /** Descriptions of the served pods (or the stand-in pod) both selectors select. */
  private static Set<String> selectedPods(
      ManifestModel model, Object hook, List<PodTemplate> pods) {
    Object nsSelector = Values.at(hook, "namespaceSelector");
    Object objSelector = Values.at(hook, "objectSelector");
    Set<String> out = new LinkedHashSet<>();
    if (pods.isEmpty()) {
      if (Dra.selects(nsSelector, Dra.namespaceLabels(model, DEFAULT_NAMESPACE))
          && Dra.selects(objSelector, Map.of())) {
        out.add("namespace " + DEFAULT_NAMESPACE);
      }
      return out;
    }
    for (PodTemplate p : pods) {
      String ns = p.namespace().orElse(DEFAULT_NAMESPACE);
      if (Dra.selects(nsSelector, Dra.namespaceLabels(model, ns))
          && Dra.selects(objSelector, p.labels())) {
        out.add(p.describe() + " (namespace " + ns + ")");
      }
    }
    return out;
  }
}
