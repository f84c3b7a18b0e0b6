package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodGroup;
import dev.hamilock.preflight.model.RbacBinding;
import dev.hamilock.preflight.model.RbacRole;
import dev.hamilock.preflight.model.SchedulerDeployment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * PF04 {@code podgroup-rbac}: the scheduler's ServiceAccount must {@code get}, {@code list} and
 * {@code watch} {@code podgroups.scheduling.x-k8s.io} cluster-wide (Coscheduling's informer watches
 * all namespaces), else every member's PreFilter fails. Judged from the RBAC documents given:
 * ClusterRoles with {@code matchLabels} aggregation, ClusterRoleBindings (RoleBindings are
 * namespace-only), {@code *} honoured, {@code resourceNames}-restricted rules not counted; subjects
 * match by ServiceAccount name and namespace or the groups {@code system:serviceaccounts[:NS]} and
 * {@code system:authenticated}. The account is the HAMi scheduler Deployment's {@code
 * serviceAccountName} ({@code default} when unset), else the chart's {@code hami-scheduler}. Runs
 * only when RBAC documents are given and Coscheduling is in use (PodGroups, a profile enabling it,
 * or no scheduler configuration). ERROR; WARNING when a bound role outside {@code system:*} is
 * missing from the input.
 */
public final class PodGroupRbacCheck extends AbstractCheck {

  private static final List<String> VERBS = List.of("get", "list", "watch");

  /** Creates the check. */
  public PodGroupRbacCheck() {
    super(
        "PF04",
        "podgroup-rbac",
        "The scheduler's ServiceAccount must get/list/watch podgroups.scheduling.x-k8s.io (from the RBAC given).");
  }

  private record Account(String name, Optional<String> namespace, String origin) {
    String describe() {
      return namespace.map(ns -> ns + "/").orElse("") + name;
    }
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    if (!model.hasRbac()) {
      return List.of();
    }
    boolean used =
        model.podGroups().stream().anyMatch(PodGroup::isCoscheduling)
            || !Gangs.coschedulingProfiles(model).isEmpty()
            || model.schedulerConfigurations().isEmpty();
    if (!used) {
      return List.of();
    }
    List<Finding> out = new ArrayList<>();
    for (Account a : accounts(model)) {
      check(model, a).ifPresent(out::add);
    }
    return out;
  }

  private static List<Account> accounts(ManifestModel model) {
    Map<String, Account> out = new LinkedHashMap<>();
    for (SchedulerDeployment d : model.schedulerDeployments()) {
      Account a =
          new Account(
              d.serviceAccountName().orElse("default"),
              d.template().namespace(),
              "spec.serviceAccountName of " + d.template().describe());
      out.putIfAbsent(a.describe(), a);
    }
    if (out.isEmpty()) {
      for (ManifestDocument sa : model.serviceAccounts()) {
        if (sa.name().filter(Gangs.HAMI_SCHEDULER::equals).isPresent()) {
          Account a =
              new Account(
                  Gangs.HAMI_SCHEDULER,
                  sa.namespace(),
                  "the chart's default, ServiceAccount given");
          out.putIfAbsent(a.describe(), a);
        }
      }
    }
    if (out.isEmpty()) {
      out.put(
          Gangs.HAMI_SCHEDULER,
          new Account(
              Gangs.HAMI_SCHEDULER,
              Optional.empty(),
              "assumed: the chart's scheduler ServiceAccount (no scheduler Deployment given)"));
    }
    return List.copyOf(out.values());
  }

  private Optional<Finding> check(ManifestModel model, Account a) {
    Set<String> clusterWide = new LinkedHashSet<>();
    Set<String> namespaced = new LinkedHashSet<>();
    Set<String> unknownRoles = new LinkedHashSet<>();
    Location where = null;
    for (RbacBinding b : model.bindings()) {
      if (!binds(b, a)) {
        continue;
      }
      boolean cluster = b.kind().equals("ClusterRoleBinding");
      Optional<RbacRole> role =
          model.roles().stream()
              .filter(
                  r ->
                      r.kind().equals(b.roleKind())
                          && r.name().equals(b.roleName())
                          && (r.kind().equals("ClusterRole")
                              || r.namespace().equals(b.namespace())))
              .findFirst();
      if (role.isEmpty()) {
        if (!b.roleName().startsWith("system:")) {
          unknownRoles.add(b.roleKind() + " " + b.roleName());
        }
        continue;
      }
      if (where == null) {
        where = b.document().location("roleRef");
      }
      for (RbacRole.Rule rule : rulesOf(model, role.get())) {
        for (String verb : VERBS) {
          if (rule.grants(PodGroup.SCHEDULER_PLUGINS_GROUP, Gangs.PODGROUPS, verb)) {
            (cluster ? clusterWide : namespaced).add(verb);
          }
        }
      }
    }
    List<String> missing = VERBS.stream().filter(v -> !clusterWide.contains(v)).toList();
    if (missing.isEmpty()) {
      return Optional.empty();
    }
    if (where == null) {
      where = firstRbacLocation(model);
    }
    StringBuilder msg =
        new StringBuilder("ServiceAccount ")
            .append(a.describe())
            .append(" (")
            .append(a.origin())
            .append(") cannot ")
            .append(String.join(", ", missing))
            .append(
                " podgroups.scheduling.x-k8s.io cluster-wide according to the RBAC given: Coscheduling cannot read "
                    + "PodGroups, every member's PreFilter fails and the group stays Pending.");
    if (!namespaced.isEmpty()) {
      msg.append(" A RoleBinding grants ")
          .append(String.join(", ", namespaced))
          .append(
              " only inside its namespace, which the scheduler's cluster-wide informer cannot use.");
    }
    Severity severity = Severity.ERROR;
    if (!unknownRoles.isEmpty()) {
      severity = Severity.WARNING;
      msg.append(" Not in the files, so not evaluated: ")
          .append(String.join(", ", unknownRoles))
          .append('.');
    }
    return Optional.of(
        finding(
            severity,
            where,
            msg.toString(),
            "Add a ClusterRole with rules [{apiGroups: [scheduling.x-k8s.io], resources: [podgroups], verbs: [get, list, "
                + "watch]}] and a ClusterRoleBinding of it to ServiceAccount "
                + a.describe()
                + " (the guide's hami-podgroup-reader)."));
  }

  private static Location firstRbacLocation(ManifestModel model) {
    if (!model.bindings().isEmpty()) {
      return model.bindings().get(0).document().location("subjects");
    }
    return model.roles().get(0).document().location("rules");
  }

  private static boolean binds(RbacBinding b, Account a) {
    for (RbacBinding.Subject s : b.subjects()) {
      Optional<String> subjectNs = s.namespace().or(b::namespace);
      boolean nsMatches =
          a.namespace().isEmpty() || subjectNs.isEmpty() || a.namespace().equals(subjectNs);
      switch (s.kind()) {
        case "ServiceAccount" -> {
          if (s.name().equals(a.name()) && nsMatches) {
            return true;
          }
        }
        case "Group" -> {
          if (s.name().equals("system:serviceaccounts")
              || s.name().equals("system:authenticated")) {
            return true;
          }
          if (s.name().startsWith("system:serviceaccounts:")) {
            String ns = s.name().substring("system:serviceaccounts:".length());
            if (a.namespace().isEmpty() || a.namespace().get().equals(ns)) {
              return true;
            }
          }
        }
        default -> {
          // User subjects never match a ServiceAccount here
        }
      }
    }
    return false;
  }

  /**
   * The role's rules plus, for an aggregating ClusterRole, the rules of the ClusterRoles it
   * selects.
   */
  private static List<RbacRole.Rule> rulesOf(ManifestModel model, RbacRole role) {
    List<RbacRole.Rule> rules = new ArrayList<>(role.rules());
    if (role.kind().equals("ClusterRole")) {
      for (Map<String, String> selector : role.aggregationSelectors()) {
        for (RbacRole other : model.roles()) {
          if (other != role
              && other.kind().equals("ClusterRole")
              && !selector.isEmpty()
              && other.labels().entrySet().containsAll(selector.entrySet())) {
            rules.addAll(other.rules());
          }
        }
      }
    }
    return rules;
  }
}
