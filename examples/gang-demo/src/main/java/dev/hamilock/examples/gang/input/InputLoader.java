package dev.hamilock.examples.gang.input;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.device.spi.InvalidResourceRequestException;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.examples.gang.input.DemoInput.NodeEntry;
import dev.hamilock.examples.gang.input.DemoInput.PodEntry;
import dev.hamilock.examples.gang.input.DemoInput.PodGroupEntry;
import dev.hamilock.k8s.view.KubernetesViews;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import dev.hamilock.preflight.manifest.YamlPath;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Loads the demo's input: multi-document YAML or JSON files read with the preflight module's {@link
 * ManifestLoader} (SnakeYAML from client-java, line-tracking, file and document numbers in every
 * error), each Pod and Node validated by client-java's strict model reader ({@code V1Pod.fromJson}:
 * unknown fields and wrong types are errors) and turned into the device layer's views with {@link
 * KubernetesViews}; HAMi resource values are checked with the vendors' strict request parsing, so
 * {@code nvidia.com/gpumem: 16Gi} is reported at its field.
 *
 * <p>The built-in input ({@link #builtIn}) is the set-up guide's gang ({@code gang-training.yaml})
 * and two GPU nodes with real HAMi registrations ({@code nodes.yaml}), both class-path resources.
 */
public final class InputLoader {
  /** Class-path folder of the built-in manifests. */
  static final String RESOURCES = "/dev/hamilock/examples/gang/";

  /** The built-in gang. */
  public static final String BUILT_IN_GANG = "gang-training.yaml";

  /** The built-in nodes. */
  public static final String BUILT_IN_NODES = "nodes.yaml";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final PodFitter fitter;

  /**
   * @param registry the vendors whose resources are validated
   */
  public InputLoader(VendorRegistry registry) {
    this.fitter = PodFitter.create(Objects.requireNonNull(registry, "registry"));
  }

  /**
   * @return the built-in gang and nodes
   * @throws InputException if a resource is missing or invalid (a packaging bug)
   */
  public DemoInput builtIn() throws InputException {
    List<ManifestDocument> docs = new ArrayList<>(resource(BUILT_IN_GANG));
    docs.addAll(resource(BUILT_IN_NODES));
    return build(List.of(label(BUILT_IN_GANG), label(BUILT_IN_NODES)), docs);
  }

  /**
   * Loads user files; if they contain no Node, the built-in nodes are added (and a note says so).
   *
   * @param files YAML/JSON files, each possibly multi-document; non-empty
   * @return the input
   * @throws InputException for an unreadable file, invalid YAML/JSON, or a bad field (naming file,
   *     document and field), or when the files contain no Pod
   */
  public DemoInput load(List<Path> files) throws InputException {
    checkArgument(!files.isEmpty(), "files must not be empty: %s", files);
    List<ManifestDocument> docs = new ArrayList<>();
    List<String> sources = new ArrayList<>();
    for (Path f : files) {
      try {
        docs.addAll(ManifestLoader.load(f));
      } catch (ManifestException e) {
        throw new InputException(e.source(), e.documentNumber(), "", e.problem(), e);
      }
      sources.add(f.toString());
    }
    boolean hasNodes = docs.stream().anyMatch(d -> d.kind().filter("Node"::equals).isPresent());
    List<String> notes = new ArrayList<>();
    if (!hasNodes) {
      docs.addAll(resource(BUILT_IN_NODES));
      sources.add(label(BUILT_IN_NODES));
      notes.add("no Node in the files: using the built-in nodes (" + label(BUILT_IN_NODES) + ")");
    }
    DemoInput in = build(sources, docs);
    if (in.pods().isEmpty()) {
      throw new InputException(
          String.join(", ", sources.subList(0, files.size())),
          OptionalInt.empty(),
          "",
          "no Pod to bind: give Pod manifests (kind: Pod)",
          null);
    }
    List<String> all = new ArrayList<>(notes);
    all.addAll(in.notes());
    return new DemoInput(in.sources(), in.documents(), in.pods(), in.podGroups(), in.nodes(), all);
  }

  private static String label(String resource) {
    return "built-in:" + resource;
  }

  private static List<ManifestDocument> resource(String name) throws InputException {
    try (InputStream in = InputLoader.class.getResourceAsStream(RESOURCES + name)) {
      if (in == null) {
        throw new InputException(
            label(name), OptionalInt.empty(), "", "resource missing from the class path", null);
      }
      return ManifestLoader.parse(
          label(name), new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new InputException(
          label(name), OptionalInt.empty(), "", "cannot read: " + e.getMessage(), e);
    } catch (ManifestException e) {
      throw new InputException(e.source(), e.documentNumber(), "", e.problem(), e);
    }
  }

  private DemoInput build(List<String> sources, List<ManifestDocument> docs) throws InputException {
    List<PodEntry> pods = new ArrayList<>();
    List<PodGroupEntry> groups = new ArrayList<>();
    List<NodeEntry> nodes = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (ManifestDocument d : docs) {
      String kind =
          d.kind()
              .orElseThrow(
                  () ->
                      error(d, "kind", "missing: every document needs kind (Pod, PodGroup, Node)"));
      if (d.name().isEmpty()) {
        throw error(d, "metadata.name", "missing or not a string");
      }
      switch (kind) {
        case "Pod" -> pods.add(pod(d));
        case "Node" -> nodes.add(node(d));
        case "PodGroup" -> groups.add(podGroup(d));
        default -> {
          notes.add(
              d.source()
                  + ": document "
                  + d.documentNumber()
                  + ": "
                  + d.describe()
                  + " is not bound by the demo (it reads Pod, PodGroup, Node); used only by the preflight checks");
          continue;
        }
      }
      String key =
          kind
              + " "
              + d.namespace().orElse(kind.equals("Node") ? "" : "default")
              + "/"
              + d.name().get();
      if (!seen.add(key)) {
        throw error(d, "metadata.name", key + " appears twice in the input");
      }
    }
    return new DemoInput(sources, docs, pods, groups, nodes, notes);
  }

  private PodEntry pod(ManifestDocument d) throws InputException {
    if (!"v1".equals(d.apiVersion().orElse(""))) {
      throw error(
          d, "apiVersion", "a Pod needs apiVersion v1, not \"" + d.apiVersion().orElse("") + "\"");
    }
    Map<String, Object> object = withNamespace(d);
    V1Pod pod;
    try {
      pod = V1Pod.fromJson(JSON.writeValueAsString(object));
    } catch (IOException | RuntimeException e) {
      throw error(d, "", "not a valid Pod: " + firstSentence(e));
    }
    if (pod.getSpec() == null
        || pod.getSpec().getContainers() == null
        || pod.getSpec().getContainers().isEmpty()) {
      throw error(d, "spec.containers", "a Pod needs at least one container");
    }
    PodView view;
    try {
      view = KubernetesViews.podView(pod);
    } catch (RuntimeException e) {
      throw error(d, "", "not a usable Pod: " + firstSentence(e));
    }
    try {
      fitter.requests(view);
    } catch (InvalidPodRequestException e) {
      String field = "";
      if (e.getCause() instanceof InvalidResourceRequestException r) {
        field = resourceField(view, r.container(), r.resource());
      }
      throw error(d, field, e.getMessage());
    } catch (RuntimeException e) {
      throw error(d, "spec.containers", "resource requests cannot be read: " + firstSentence(e));
    }
    return new PodEntry(d, object, view);
  }

  private static String resourceField(PodView view, String container, String resource) {
    List<ContainerView> init = view.initContainers();
    for (int i = 0; i < init.size(); i++) {
      if (init.get(i).name().equals(container)) {
        return YamlPath.key(
            YamlPath.index("spec.initContainers", i) + ".resources.limits", resource);
      }
    }
    List<ContainerView> main = view.containers();
    for (int i = 0; i < main.size(); i++) {
      if (main.get(i).name().equals(container)) {
        return YamlPath.key(YamlPath.index("spec.containers", i) + ".resources.limits", resource);
      }
    }
    return "spec.containers";
  }

  private NodeEntry node(ManifestDocument d) throws InputException {
    if (!"v1".equals(d.apiVersion().orElse(""))) {
      throw error(
          d, "apiVersion", "a Node needs apiVersion v1, not \"" + d.apiVersion().orElse("") + "\"");
    }
    V1Node node;
    try {
      node = V1Node.fromJson(JSON.writeValueAsString(d.root()));
    } catch (IOException | RuntimeException e) {
      throw error(d, "", "not a valid Node: " + firstSentence(e));
    }
    try {
      return new NodeEntry(d, new LinkedHashMap<>(d.root()), KubernetesViews.nodeView(node));
    } catch (RuntimeException e) {
      throw error(d, "", "not a usable Node: " + firstSentence(e));
    }
  }

  private static PodGroupEntry podGroup(ManifestDocument d) throws InputException {
    String api = d.apiVersion().orElse("");
    if (!api.startsWith("scheduling.x-k8s.io/")) {
      throw error(
          d,
          "apiVersion",
          "the demo reads Coscheduling PodGroups (scheduling.x-k8s.io/v1alpha1), not \""
              + api
              + "\"");
    }
    Object spec = d.root().get("spec");
    int min = 0;
    if (spec != null) {
      if (!(spec instanceof Map<?, ?> m)) {
        throw error(d, "spec", "must be a mapping");
      }
      Object v = m.get("minMember");
      if (v != null) {
        if (!(v instanceof Long l) || l < 0 || l > Integer.MAX_VALUE) {
          throw error(
              d, "spec.minMember", "must be a non-negative integer, not " + describeValue(v));
        }
        min = (int) (long) l;
      }
    }
    Map<String, Object> object = withNamespace(d);
    return new PodGroupEntry(d, object, d.namespace().orElse("default"), d.name().get(), min);
  }

  private static String describeValue(Object v) {
    return v instanceof String s ? "\"" + s + "\"" : String.valueOf(v);
  }

  private static Map<String, Object> withNamespace(ManifestDocument d) throws InputException {
    Map<String, Object> object = new LinkedHashMap<>(d.root());
    Object meta = object.get("metadata");
    if (!(meta instanceof Map<?, ?> m)) {
      throw error(d, "metadata", "must be a mapping");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> copy = new LinkedHashMap<>((Map<String, Object>) m);
    copy.putIfAbsent("namespace", "default");
    object.put("metadata", copy);
    try {
      JSON.writeValueAsString(object); // BigInteger etc. are fine; fail here rather than later
    } catch (JsonProcessingException e) {
      throw error(d, "", "cannot be written as JSON: " + e.getOriginalMessage());
    }
    return object;
  }

  private static String firstSentence(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int json = m.indexOf(" JSON: ");
    if (json > 0) {
      m = m.substring(0, json);
    }
    return m.length() > 300 ? m.substring(0, 300) + "…" : m;
  }

  private static InputException error(ManifestDocument d, String field, String problem) {
    String at = field;
    if (!field.isEmpty()) {
      var line = d.location(field).line();
      if (line.isPresent()) {
        problem = problem + " (line " + line.getAsInt() + ")";
      }
    }
    return new InputException(
        d.source(), OptionalInt.of(d.documentNumber()), at, d.describe() + ": " + problem, null);
  }
}
