package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.model.ContainerSpec;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodTemplate;
import dev.hamilock.preflight.model.SchedulerConfiguration;
import dev.hamilock.preflight.model.SchedulerExtender;
import dev.hamilock.preflight.model.SchedulerProfile;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * PF11 {@code extender-bind-bypass}: a setting that lets kube-scheduler bind a GPU pod without the
 * HAMi extender's bind, so no node lock is taken and no allocation reaches the device plugin.
 * kube-scheduler binds through an extender only if it has a {@code bindVerb} and is interested in
 * the pod ({@code managedResources} empty or named in a container's {@code requests}/{@code
 * limits}; {@code pkg/scheduler/schedule_one.go} {@code extendersBinding}, {@code extender.go}
 * {@code IsInterested}); an {@code ignorable} extender's failed bind falls back to the default
 * binder (kubernetes#122494, #122503).
 *
 * <ul>
 *   <li>ERROR: an extender managing HAMi resources has no {@code bindVerb} and no other extender of
 *       the configuration binds GPU pods;
 *   <li>ERROR: the binding extender is {@code ignorable: true};
 *   <li>ERROR: a pod requesting HAMi resources names none of its {@code managedResources};
 *   <li>WARNING: its non-empty {@code managedResources} lacks {@code nvidia.com/gpu};
 *   <li>ERROR: a pod requesting HAMi resources names a scheduler that is no profile of the binding
 *       extender's configuration (unset or {@code default-scheduler} is left to HAMi's webhook and
 *       PF07).
 * </ul>
 *
 * Not a bypass: {@code ignoredByScheduler} (HAMi's chart sets it), {@code nodeCacheCapable}, {@code
 * filterVerb}.
 */
public final class ExtenderBindBypassCheck extends AbstractCheck {

  /** Creates the check. */
  public ExtenderBindBypassCheck() {
    super(
        "PF11",
        "extender-bind-bypass",
        "GPU pods must be bound through the HAMi extender's bind (bindVerb, not ignorable, managedResources, scheduler name).");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    List<SchedulerConfiguration> withBinder = new ArrayList<>();
    List<SchedulerExtender> binders = new ArrayList<>();
    for (SchedulerConfiguration cfg : model.schedulerConfigurations()) {
      List<SchedulerExtender> hami = GpuResources.hamiExtenders(cfg);
      if (hami.isEmpty()) {
        continue;
      }
      SchedulerExtender binder =
          hami.stream().filter(x -> x.bindVerb().isPresent()).findFirst().orElse(null);
      if (binder == null) {
        SchedulerExtender x = hami.get(0);
        out.add(
            finding(
                Severity.ERROR,
                x.location(""),
                "The HAMi extender "
                    + x.urlPrefix().map(u -> "at " + u + " ").orElse("")
                    + "has no bindVerb: "
                    + "kube-scheduler binds GPU pods with its default binder, so no node lock is taken and the "
                    + "device plugin gets no allocation hand-off (pods may share a card's memory without limits).",
                "Add bindVerb: bind to this extender (HAMi's chart does)."));
        continue;
      }
      withBinder.add(cfg);
      binders.add(binder);
      if (binder.ignorable()) {
        out.add(
            finding(
                Severity.ERROR,
                binder.location("ignorable"),
                "The HAMi extender is ignorable: true and has a bindVerb: since kubernetes#122503 "
                    + "a failed extender bind of an ignorable extender falls back to the default binder, so a "
                    + "lock-contention or retry-timeout answer becomes a Binding without the node lock or the "
                    + "allocation.",
                "Remove ignorable (or set ignorable: false) on the extender that binds GPU pods."));
      }
      if (!binder.managedResources().isEmpty()
          && !binder.managedResources().contains(GpuResources.COUNT)) {
        out.add(
            finding(
                Severity.WARNING,
                binder.location("managedResources"),
                "The HAMi extender's managedResources do not list "
                    + GpuResources.COUNT
                    + ": kube-scheduler sends "
                    + "it only pods naming a listed resource, so a pod asking only for whole GPUs ("
                    + GpuResources.COUNT
                    + ") is bound by the default binder without the node lock.",
                "Add - name: "
                    + GpuResources.COUNT
                    + " (ignoredByScheduler: true) to managedResources."));
      }
    }
    if (binders.isEmpty()) {
      return out;
    }
    Set<String> coscheduling = Gangs.names(Gangs.coschedulingProfiles(model));
    for (PodTemplate t : model.podTemplates()) {
      Set<String> resources = new LinkedHashSet<>();
      for (ContainerSpec c : t.containers()) {
        resources.addAll(c.requests().keySet());
        resources.addAll(c.limits().keySet());
      }
      if (resources.stream().noneMatch(GpuResources.ALL::contains)) {
        continue;
      }
      String name = t.effectiveSchedulerName();
      int i = indexOfProfile(withBinder, name);
      if (i < 0) {
        boolean defaulted = name.equals(SchedulerProfile.DEFAULT_SCHEDULER_NAME);
        boolean pf07 = t.podGroupLabel().isPresent() && !coscheduling.isEmpty();
        if (!defaulted && !pf07) {
          out.add(
              finding(
                  Severity.ERROR,
                  t.location("spec.schedulerName"),
                  t.describe()
                      + " requests HAMi GPU resources but uses scheduler \""
                      + name
                      + "\", which is no "
                      + "profile of the configuration with the HAMi extender ("
                      + Gangs.quoted(profileNames(withBinder))
                      + "): it is bound without the extender's bind.",
                  "Set spec.schedulerName to " + profileNames(withBinder).iterator().next() + "."));
        }
        continue;
      }
      SchedulerExtender binder = binders.get(i);
      if (!binder.isInterestedIn(resources)) {
        out.add(
            finding(
                Severity.ERROR,
                t.location("spec"),
                t.describe()
                    + " requests "
                    + resources.stream().filter(GpuResources.ALL::contains).toList()
                    + " but the HAMi extender manages only "
                    + binder.managedResources()
                    + ": kube-scheduler never sends it to the extender, so its default binder binds it without "
                    + "the node lock or the allocation.",
                "List every HAMi resource (at least "
                    + GpuResources.COUNT
                    + ") under the extender's managedResources."));
      }
    }
    return out;
  }

  private static int indexOfProfile(List<SchedulerConfiguration> configs, String schedulerName) {
    for (int i = 0; i < configs.size(); i++) {
      for (SchedulerProfile p : configs.get(i).profiles()) {
        if (p.schedulerName().equals(schedulerName)) {
          return i;
        }
      }
    }
    return -1;
  }

  private static Set<String> profileNames(List<SchedulerConfiguration> configs) {
    Set<String> out = new LinkedHashSet<>();
    configs.forEach(c -> c.profiles().forEach(p -> out.add(p.schedulerName())));
    return out;
  }
}
