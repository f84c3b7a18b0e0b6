package dev.hamilock.preflight.checks;

import static dev.hamilock.preflight.checks.Gangs.COSCHEDULING;
import static dev.hamilock.preflight.checks.Gangs.MULTI_POINT;
import static dev.hamilock.preflight.checks.Gangs.PRIORITY_SORT;
import static dev.hamilock.preflight.checks.Gangs.QUEUE_SORT;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.SchedulerConfiguration;
import dev.hamilock.preflight.model.SchedulerProfile;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * PF01 {@code queue-sort-conflict}: a profile enables Coscheduling (which is a QueueSort plugin
 * when enabled in {@code multiPoint} or {@code queueSort}) while the default {@code PrioritySort}
 * stays enabled, so kube-scheduler refuses to start with {@code only one queue sort plugin required
 * for profile with scheduler name "hami-scheduler", but got 2}. Also reports profiles of one
 * configuration that end up with different queue-sort plugins, which kube-scheduler rejects as well
 * (all profiles share one scheduling queue). Severity ERROR.
 */
public final class QueueSortConflictCheck extends AbstractCheck {

  /** Creates the check. */
  public QueueSortConflictCheck() {
    super(
        "PF01",
        "queue-sort-conflict",
        "Coscheduling enabled while PrioritySort is not disabled in queueSort (kube-scheduler will not start).");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    for (SchedulerConfiguration cfg : model.schedulerConfigurations()) {
      Set<String> first = null;
      String firstName = null;
      for (SchedulerProfile p : cfg.profiles()) {
        Set<String> sorts = queueSortPlugins(p);
        if (sorts.size() > 1) {
          String where =
              p.plugins().containsKey(QUEUE_SORT)
                  ? "plugins.queueSort"
                  : p.plugins().isEmpty() ? "" : "plugins";
          out.add(
              finding(
                  Severity.ERROR,
                  p.location(where),
                  "Profile \""
                      + p.schedulerName()
                      + "\" enables Coscheduling while the default PrioritySort queue-sort "
                      + "plugin stays enabled; kube-scheduler refuses to start: only one queue sort plugin required "
                      + "for profile with scheduler name \""
                      + p.schedulerName()
                      + "\", but got "
                      + sorts.size()
                      + ".",
                  "Disable PrioritySort in this profile: plugins: {queueSort: {disabled: [{name: PrioritySort}]}} "
                      + "(keep Coscheduling under plugins.multiPoint.enabled)."));
        } else if (sorts.isEmpty()) {
          out.add(
              finding(
                  Severity.ERROR,
                  p.location("plugins"),
                  "Profile \""
                      + p.schedulerName()
                      + "\" disables PrioritySort without enabling another "
                      + "queue-sort plugin; kube-scheduler refuses to start without exactly one.",
                  "Enable Coscheduling in the profile (plugins.multiPoint.enabled: [{name: Coscheduling}]) or stop "
                      + "disabling PrioritySort."));
        } else if (first == null) {
          first = sorts;
          firstName = p.schedulerName();
        } else if (!first.equals(sorts)) {
          out.add(
              finding(
                  Severity.ERROR,
                  p.location("plugins"),
                  "Profile \""
                      + p.schedulerName()
                      + "\" sorts its queue with "
                      + sorts
                      + " but profile \""
                      + firstName
                      + "\" of the same configuration uses "
                      + first
                      + "; kube-scheduler refuses to start "
                      + "because all profiles share one scheduling queue and must use the same queue-sort plugin.",
                  "Give every profile of this KubeSchedulerConfiguration the same queue-sort set-up (enable "
                      + "Coscheduling and disable PrioritySort in all of them), or run the profiles in separate "
                      + "kube-scheduler processes."));
        }
      }
    }
    return out;
  }

  /** The queue-sort plugins a profile ends up with (defaults: PrioritySort). */
  static Set<String> queueSortPlugins(SchedulerProfile p) {
    Set<String> out = new TreeSet<>();
    boolean prioritySortDisabled =
        p.disablesAt(QUEUE_SORT, PRIORITY_SORT) || p.disablesAt(MULTI_POINT, PRIORITY_SORT);
    if (!prioritySortDisabled || p.enablesAt(QUEUE_SORT, PRIORITY_SORT)) {
      out.add(PRIORITY_SORT);
    }
    if (p.enablesAt(MULTI_POINT, COSCHEDULING) || p.enablesAt(QUEUE_SORT, COSCHEDULING)) {
      out.add(COSCHEDULING);
    }
    SchedulerProfile.PluginSet qs = p.plugins().get(QUEUE_SORT);
    if (qs != null) {
      out.addAll(qs.enabled());
    }
    return out;
  }
}
