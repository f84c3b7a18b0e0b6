package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import dev.hamilock.preflight.manifest.Values;
import dev.hamilock.preflight.manifest.YamlPath;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * What a set of manifests says about a Coscheduling + HAMi installation: scheduler configurations,
 * the HAMi scheduler's workload and flags, RBAC, PodGroups and the pods that will be created. Built
 * once from all input documents and handed to every check.
 *
 * <p>Recognised documents: {@code ConfigMap}s carrying a {@code KubeSchedulerConfiguration} in any
 * {@code data} entry (the chart uses {@code config.yaml}); bare {@code
 * KubeSchedulerConfiguration}s; Helm values (a document without {@code kind} that has a {@code
 * scheduler} mapping); Roles, ClusterRoles and their bindings; ServiceAccounts; PodGroups of {@code
 * scheduling.x-k8s.io} and {@code scheduling.k8s.io}; Pods and every object with a pod template;
 * {@code kind: List} (its {@code items} are read as documents). Every object is also kept as
 * written ({@link #objects(String, String)}).
 */
public final class ManifestModel {

  private static final Set<String> REPLICATED =
      Set.of("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController");
  private static final Set<String> RBAC_KINDS =
      Set.of("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding");
  private static final String RETRY_FLAG = "--node-lock-retry-timeout";
  private static final String LOCK_FLAG = "--node-lock-timeout";

  private final List<ManifestDocument> documents;
  private final List<SchedulerConfiguration> schedulerConfigurations = new ArrayList<>();
  private final List<SchedulerDeployment> schedulerDeployments = new ArrayList<>();
  private final List<ExtenderFlags> extenderFlags = new ArrayList<>();
  private final List<PodGroup> podGroups = new ArrayList<>();
  private final List<PodTemplate> podTemplates = new ArrayList<>();
  private final List<RbacRole> roles = new ArrayList<>();
  private final List<RbacBinding> bindings = new ArrayList<>();
  private final List<ManifestDocument> serviceAccounts = new ArrayList<>();
  private final List<ManifestObject> objects = new ArrayList<>();

  private ManifestModel(List<ManifestDocument> documents) {
    this.documents = List.copyOf(documents);
  }

  /**
   * Builds the model.
   *
   * @param documents all input documents, in input order
   * @return the model
   * @throws ManifestException if an embedded {@code KubeSchedulerConfiguration} is not valid YAML
   */
  public static ManifestModel of(List<ManifestDocument> documents) throws ManifestException {
    Objects.requireNonNull(documents, "documents");
    ManifestModel m = new ManifestModel(documents);
    for (ManifestDocument d : documents) {
      m.read(d, d.root(), "");
    }
    return m;
  }

  /**
   * @return all input documents, in input order
   */
  public List<ManifestDocument> documents() {
    return documents;
  }

  /**
   * @return every KubeSchedulerConfiguration found (bare or inside a ConfigMap)
   */
  public List<SchedulerConfiguration> schedulerConfigurations() {
    return List.copyOf(schedulerConfigurations);
  }

  /**
   * @return every workload recognised as the HAMi scheduler (see {@link SchedulerDeployment})
   */
  public List<SchedulerDeployment> schedulerDeployments() {
    return List.copyOf(schedulerDeployments);
  }

  /**
   * @return the node-lock flags of every HAMi extender launch found (Deployments and Helm values)
   */
  public List<ExtenderFlags> extenderFlags() {
    return List.copyOf(extenderFlags);
  }

  /**
   * @return every PodGroup
   */
  public List<PodGroup> podGroups() {
    return List.copyOf(podGroups);
  }

  /**
   * @return every Pod and pod template
   */
  public List<PodTemplate> podTemplates() {
    return List.copyOf(podTemplates);
  }

  /**
   * @return every Role and ClusterRole
   */
  public List<RbacRole> roles() {
    return List.copyOf(roles);
  }

  /**
   * @return every RoleBinding and ClusterRoleBinding
   */
  public List<RbacBinding> bindings() {
    return List.copyOf(bindings);
  }

  /**
   * @return every ServiceAccount document
   */
  public List<ManifestDocument> serviceAccounts() {
    return List.copyOf(serviceAccounts);
  }

  /**
   * @param group API group ({@code ""} for the core group)
   * @param kind {@code kind}
   * @return every object of that group and kind, as written, in input order ({@code kind: List}
   *     items included)
   */
  public List<ManifestObject> objects(String group, String kind) {
    return objects.stream().filter(o -> o.group().equals(group) && o.kind().equals(kind)).toList();
  }

  /**
   * @return whether any Role, ClusterRole or binding was given
   */
  public boolean hasRbac() {
    return !roles.isEmpty() || !bindings.isEmpty();
  }

  private void read(ManifestDocument doc, Map<String, Object> obj, String path)
      throws ManifestException {
    String kind = Values.string(obj.get("kind")).orElse("");
    String apiVersion = Values.string(obj.get("apiVersion")).orElse("");
    String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
    if (kind.isEmpty() && apiVersion.isEmpty()) {
      readHelmValues(doc, obj, path);
      return;
    }
    objects.add(new ManifestObject(group, kind, obj, path, doc));
    switch (kind) {
      case "List" -> {
        List<Object> items = Values.list(obj.get("items"));
        for (int i = 0; i < items.size(); i++) {
          Optional<Map<String, Object>> item = Values.map(items.get(i));
          if (item.isPresent()) {
            read(doc, item.get(), YamlPath.index(YamlPath.key(path, "items"), i));
          }
        }
      }
      case "ConfigMap" -> readConfigMap(doc, obj, path);
      case "KubeSchedulerConfiguration" ->
          schedulerConfigurations.add(readSchedulerConfiguration(doc, obj, path));
      case "PodGroup" -> readPodGroup(doc, obj, path, group);
      case "ServiceAccount" -> serviceAccounts.add(doc);
      default -> {
        if (RBAC_KINDS.contains(kind) && group.equals("rbac.authorization.k8s.io")) {
          readRbac(doc, obj, kind);
        } else {
          readWorkload(doc, obj, path, kind);
        }
      }
    }
  }

  private void readConfigMap(ManifestDocument doc, Map<String, Object> obj, String path)
      throws ManifestException {
    Map<String, Object> data = Values.map(obj.get("data")).orElse(Map.of());
    for (Map.Entry<String, Object> e : data.entrySet()) {
      String text = e.getValue() instanceof String s ? s : null;
      if (text == null || !text.contains("KubeSchedulerConfiguration")) {
        continue;
      }
      String dataPath = YamlPath.key(YamlPath.key(path, "data"), e.getKey());
      ManifestDocument embedded = ManifestLoader.parseEmbedded(doc, dataPath, text);
      if ("KubeSchedulerConfiguration".equals(embedded.kind().orElse(""))) {
        schedulerConfigurations.add(readSchedulerConfiguration(embedded, embedded.root(), ""));
      }
    }
  }

  private static SchedulerConfiguration readSchedulerConfiguration(
      ManifestDocument doc, Map<String, Object> cfg, String base) {
    List<SchedulerProfile> profiles = new ArrayList<>();
    List<Object> rawProfiles = Values.list(cfg.get("profiles"));
    for (int i = 0; i < rawProfiles.size(); i++) {
      Map<String, Object> p = Values.map(rawProfiles.get(i)).orElse(Map.of());
      Map<String, SchedulerProfile.PluginSet> plugins = new LinkedHashMap<>();
      Values.map(p.get("plugins"))
          .orElse(Map.of())
          .forEach(
              (point, set) ->
                  plugins.put(
                      point,
                      new SchedulerProfile.PluginSet(
                          names(Values.at(set, "enabled")), names(Values.at(set, "disabled")))));
      profiles.add(
          new SchedulerProfile(
              Values.string(p.get("schedulerName")).orElse(SchedulerProfile.DEFAULT_SCHEDULER_NAME),
              plugins,
              doc,
              YamlPath.index(YamlPath.key(base, "profiles"), i)));
    }
    if (profiles.isEmpty()) {
      profiles.add(
          new SchedulerProfile(SchedulerProfile.DEFAULT_SCHEDULER_NAME, Map.of(), doc, base));
    }
    List<SchedulerExtender> extenders = new ArrayList<>();
    List<Object> rawExt = Values.list(cfg.get("extenders"));
    for (int i = 0; i < rawExt.size(); i++) {
      Map<String, Object> x = Values.map(rawExt.get(i)).orElse(Map.of());
      List<String> managed = new ArrayList<>();
      for (Object r : Values.list(x.get("managedResources"))) {
        Values.string(Values.at(r, "name")).ifPresent(managed::add);
      }
      extenders.add(
          new SchedulerExtender(
              Values.string(x.get("urlPrefix")),
              Values.string(x.get("bindVerb")),
              Values.string(x.get("httpTimeout")),
              managed,
              doc,
              YamlPath.index(YamlPath.key(base, "extenders"), i),
              Boolean.TRUE.equals(x.get("ignorable"))
                  || "true".equals(Values.scalarText(x.get("ignorable")))));
    }
    return new SchedulerConfiguration(profiles, extenders, doc, base);
  }

  private static List<String> names(Object pluginList) {
    List<String> out = new ArrayList<>();
    for (Object o : Values.list(pluginList)) {
      Values.string(Values.at(o, "name")).ifPresent(out::add);
    }
    return out;
  }

  private void readPodGroup(
      ManifestDocument doc, Map<String, Object> obj, String path, String group) {
    if (!group.equals(PodGroup.SCHEDULER_PLUGINS_GROUP) && !group.equals(PodGroup.NATIVE_GROUP)) {
      return;
    }
    String quorumPath =
        group.equals(PodGroup.NATIVE_GROUP)
            ? "spec.schedulingPolicy.gang.minCount"
            : "spec.minMember";
    Object quorum =
        group.equals(PodGroup.NATIVE_GROUP)
            ? Values.at(obj, "spec", "schedulingPolicy", "gang", "minCount")
            : Values.at(obj, "spec", "minMember");
    podGroups.add(
        new PodGroup(
            group,
            Values.string(Values.at(obj, "metadata", "name")).orElse(""),
            Values.string(Values.at(obj, "metadata", "namespace")),
            Values.integer(quorum),
            YamlPath.join(path, quorumPath),
            doc));
  }

  private void readRbac(ManifestDocument doc, Map<String, Object> obj, String kind) {
    String name = Values.string(Values.at(obj, "metadata", "name")).orElse("");
    Optional<String> ns = Values.string(Values.at(obj, "metadata", "namespace"));
    if (kind.endsWith("Binding")) {
      List<RbacBinding.Subject> subjects = new ArrayList<>();
      for (Object s : Values.list(obj.get("subjects"))) {
        subjects.add(
            new RbacBinding.Subject(
                Values.string(Values.at(s, "kind")).orElse(""),
                Values.string(Values.at(s, "name")).orElse(""),
                Values.string(Values.at(s, "namespace"))));
      }
      bindings.add(
          new RbacBinding(
              kind,
              name,
              ns,
              Values.string(Values.at(obj, "roleRef", "kind")).orElse(""),
              Values.string(Values.at(obj, "roleRef", "name")).orElse(""),
              subjects,
              doc));
      return;
    }
    List<RbacRole.Rule> rules = new ArrayList<>();
    for (Object r : Values.list(obj.get("rules"))) {
      rules.add(
          new RbacRole.Rule(
              Values.strings(Values.at(r, "apiGroups")),
              Values.strings(Values.at(r, "resources")),
              Values.strings(Values.at(r, "verbs")),
              Values.strings(Values.at(r, "resourceNames"))));
    }
    List<Map<String, String>> selectors = new ArrayList<>();
    for (Object s : Values.list(Values.at(obj, "aggregationRule", "clusterRoleSelectors"))) {
      selectors.add(Values.stringMap(Values.at(s, "matchLabels")));
    }
    roles.add(
        new RbacRole(
            kind,
            name,
            ns,
            rules,
            Values.stringMap(Values.at(obj, "metadata", "labels")),
            selectors,
            doc));
  }

  private void readWorkload(
      ManifestDocument doc, Map<String, Object> obj, String path, String kind) {
    String templateRel;
    OptionalInt count;
    Object spec = obj.get("spec");
    switch (kind) {
      case "Pod" -> {
        templateRel = "";
        count = OptionalInt.of(1);
      }
      case "PodTemplate" -> {
        templateRel = "template";
        count = OptionalInt.empty();
      }
      case "Job" -> {
        templateRel = "spec.template";
        count = jobPods(spec);
      }
      case "CronJob" -> {
        templateRel = "spec.jobTemplate.spec.template";
        count = jobPods(Values.at(spec, "jobTemplate", "spec"));
      }
      case "DaemonSet" -> {
        templateRel = "spec.template";
        count = OptionalInt.empty();
      }
      default -> {
        if (Values.at(spec, "template", "spec", "containers") == null) {
          return;
        }
        templateRel = "spec.template";
        Object replicas = Values.at(spec, "replicas");
        count =
            replicas == null && REPLICATED.contains(kind)
                ? OptionalInt.of(1)
                : Values.integer(replicas);
      }
    }
    Map<String, Object> pod =
        Values.map(templateRel.isEmpty() ? obj : at(obj, templateRel)).orElse(null);
    if (pod == null) {
      return;
    }
    String templatePath = YamlPath.join(path, templateRel);
    Map<String, Object> podSpec = Values.map(pod.get("spec")).orElse(Map.of());
    List<ContainerSpec> containers = new ArrayList<>();
    for (String list : List.of("initContainers", "containers")) {
      List<Object> cs = Values.list(podSpec.get(list));
      for (int i = 0; i < cs.size(); i++) {
        Object c = cs.get(i);
        containers.add(
            new ContainerSpec(
                Values.string(Values.at(c, "name")).orElse(""),
                Values.string(Values.at(c, "image")),
                list.equals("initContainers"),
                YamlPath.index(YamlPath.key(YamlPath.join(templatePath, "spec"), list), i),
                Values.stringMap(Values.at(c, "resources", "limits")),
                Values.stringMap(Values.at(c, "resources", "requests"))));
      }
    }
    PodTemplate template =
        new PodTemplate(
            kind,
            Values.string(Values.at(obj, "metadata", "name")).orElse(""),
            Values.string(Values.at(obj, "metadata", "namespace"))
                .or(() -> Values.string(Values.at(pod, "metadata", "namespace"))),
            count,
            templatePath,
            Values.stringMap(Values.at(pod, "metadata", "labels")),
            Values.stringMap(Values.at(pod, "metadata", "annotations")),
            kind.equals("Pod") ? Map.of() : Values.stringMap(Values.at(obj, "metadata", "labels")),
            Values.string(podSpec.get("schedulerName")),
            Values.string(Values.at(podSpec, "schedulingGroup", "podGroupName")),
            containers,
            doc);
    podTemplates.add(template);
    readSchedulerContainers(doc, template, podSpec);
  }

  private static Object at(Map<String, Object> obj, String dotted) {
    return Values.at(obj, dotted.split("\\."));
  }

  private static OptionalInt jobPods(Object jobSpec) {
    if (Boolean.TRUE.equals(Values.at(jobSpec, "suspend"))) {
      return OptionalInt.of(0);
    }
    Object p = Values.at(jobSpec, "parallelism");
    OptionalInt parallelism = p == null ? OptionalInt.of(1) : Values.integer(p);
    Object c = Values.at(jobSpec, "completions");
    if (parallelism.isEmpty() || c == null) {
      return parallelism;
    }
    OptionalInt completions = Values.integer(c);
    return completions.isEmpty()
        ? OptionalInt.empty()
        : OptionalInt.of(Math.min(parallelism.getAsInt(), completions.getAsInt()));
  }

  private void readSchedulerContainers(
      ManifestDocument doc, PodTemplate template, Map<String, Object> podSpec) {
    List<Object> cs = Values.list(podSpec.get("containers"));
    for (int i = 0; i < cs.size(); i++) {
      Object c = cs.get(i);
      String cPath =
          YamlPath.index(
              YamlPath.key(YamlPath.join(template.templatePath(), "spec"), "containers"), i);
      List<Arg> argv = new ArrayList<>();
      for (String field : List.of("command", "args")) {
        List<Object> items = Values.list(Values.at(c, field));
        for (int j = 0; j < items.size(); j++) {
          String text = Values.scalarText(items.get(j));
          if (text != null) {
            argv.add(new Arg(text, doc.location(YamlPath.index(YamlPath.key(cPath, field), j))));
          }
        }
      }
      String name = Values.string(Values.at(c, "name")).orElse("");
      boolean extender =
          name.equals("vgpu-scheduler-extender")
              || (!argv.isEmpty() && argv.get(0).text().equals("scheduler"))
              || argv.stream()
                  .anyMatch(
                      a ->
                          a.text().startsWith("--node-lock-")
                              || a.text().startsWith("--http_bind"));
      if (!extender) {
        continue;
      }
      ExtenderFlags flags =
          new ExtenderFlags(doc.location(cPath), flag(argv, RETRY_FLAG), flag(argv, LOCK_FLAG));
      extenderFlags.add(flags);
      schedulerDeployments.add(
          new SchedulerDeployment(
              template,
              Values.string(podSpec.get("serviceAccountName"))
                  .or(() -> Values.string(podSpec.get("serviceAccount"))),
              flags,
              doc));
    }
  }

  private void readHelmValues(ManifestDocument doc, Map<String, Object> obj, String path) {
    Object scheduler = obj.get("scheduler");
    if (!(scheduler instanceof Map)) {
      return;
    }
    String sPath = YamlPath.key(path, "scheduler");
    List<Arg> argv = new ArrayList<>();
    Object retryValue = Values.at(scheduler, "nodeLockRetryTimeout");
    String retryText = Values.scalarText(retryValue);
    if (retryText != null && !retryText.isEmpty()) {
      argv.add(
          new Arg(
              RETRY_FLAG + "=" + retryText,
              doc.location(YamlPath.key(sPath, "nodeLockRetryTimeout"))));
    }
    Object extraArgs = Values.at(scheduler, "extender", "extraArgs");
    List<Object> items = Values.list(extraArgs);
    String argsPath = YamlPath.key(YamlPath.key(sPath, "extender"), "extraArgs");
    for (int j = 0; j < items.size(); j++) {
      String text = Values.scalarText(items.get(j));
      if (text != null) {
        argv.add(new Arg(text, doc.location(YamlPath.index(argsPath, j))));
      }
    }
    if (argv.isEmpty() && extraArgs == null) {
      return;
    }
    extenderFlags.add(
        new ExtenderFlags(doc.location(sPath), flag(argv, RETRY_FLAG), flag(argv, LOCK_FLAG)));
  }

  private record Arg(String text, Location location) {}

  /** Last occurrence wins (pflag); accepts {@code --flag=value} and {@code --flag value}. */
  private static Optional<ExtenderFlags.FlagValue> flag(List<Arg> argv, String flag) {
    Optional<ExtenderFlags.FlagValue> found = Optional.empty();
    for (int i = 0; i < argv.size(); i++) {
      String t = argv.get(i).text().trim();
      if (t.startsWith(flag + "=")) {
        found =
            Optional.of(
                new ExtenderFlags.FlagValue(
                    t.substring(flag.length() + 1), argv.get(i).location()));
      } else if (t.equals(flag)) {
        found =
            i + 1 < argv.size()
                ? Optional.of(
                    new ExtenderFlags.FlagValue(
                        argv.get(i + 1).text().trim(), argv.get(i + 1).location()))
                : Optional.of(new ExtenderFlags.FlagValue("", argv.get(i).location()));
      }
    }
    return found;
  }
}
