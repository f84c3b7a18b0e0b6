package dev.hamilock.k8s.view;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;
import org.quicktheories.generators.SourceDSL;

/**
 * The two Pod/Node mappers agree: the same generated Pod or Node JSON read by the schema-free
 * {@link JsonViews} (Jackson) and, through client-java's own JSON ({@link JSON#deserialize}) as a
 * {@link V1Pod}/{@link V1Node}, by the typed {@link KubernetesViews} gives the same view.
 * Quantities are compared by value ({@code 1.50} = {@code 1.5}): client-java's {@code Quantity} and
 * {@code Quantities.parse} may pick different scales for the same number.
 *
 * <p>Generated: names, uids, labels and annotations of any Unicode text (absent, null or empty maps
 * too), deletion timestamps, phases (the five, empty, unknown text, absent), pod group names and
 * node names (empty too), 0–3 init and 0–3 regular containers with image or not, restart policy
 * ({@code Always}, {@code Never}, {@code OnFailure}, "" or none) and limits and requests of
 * quantities in every suffix form (decimal SI, binary, exponent, fractions, millis), the resources
 * kube-scheduler gave through DRA ({@code status.extendedResourceClaimStatus.requestMappings},
 * empty names too: the breaker of 2a93f8f found the client-java mapper dropping them), the names of
 * the ResourceClaims a pod uses ({@code spec.resourceClaims}, {@code status.resourceClaimStatuses},
 * {@code status.extendedResourceClaimStatus}; unset and empty names too), nodes with allocatable
 * quantities. Only fields client-java's models know are generated (its models reject unknown ones;
 * JsonViews ignores them, see JsonViewsTest).
 */
class ViewMappersAgreeProperties {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  /**
   * Every suffix of the quantity grammar but {@code Ei}: client-java 27's {@code Quantity} rounds
   * 2^60 to 16 digits (see {@link #clientJavaRoundsTheEiSuffix}), where Go and JsonViews are exact.
   */
  private static final List<String> SUFFIXES =
      List.of(
          "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "e3", "E-2", "e0",
          "n", "u");

  /** Quantity text: 0–10^12, optionally with a 1–3 digit fraction, and a suffix. */
  static Gen<String> quantities() {
    Gen<Long> whole = SourceDSL.longs().between(0, 1_000_000_000_000L);
    Gen<String> frac =
        Generate.frequency(
            org.quicktheories.api.Pair.of(3, Generate.constant("")),
            org.quicktheories.api.Pair.of(1, Gens.strings(Gens.DIGITS, 1, 3).map(d -> "." + d)));
    Gen<String> suffix = Generate.pick(SUFFIXES);
    return in -> whole.generate(in) + frac.generate(in) + suffix.generate(in);
  }

  static Gen<Map<String, String>> stringMaps() {
    Gen<List<String>> keys = SourceDSL.lists().of(Gens.names(1, 12)).ofSizeBetween(0, 4);
    Gen<String> values = Gens.anyText(24);
    return in -> {
      Map<String, String> m = new LinkedHashMap<>();
      keys.generate(in).forEach(k -> m.put(k, values.generate(in)));
      return m;
    };
  }

  static Gen<Map<String, String>> quantityMaps() {
    Gen<List<String>> keys =
        SourceDSL.lists()
            .of(
                Generate.pick(
                    List.of(
                        "cpu",
                        "memory",
                        "nvidia.com/gpu",
                        "nvidia.com/gpumem",
                        "nvidia.com/gpucores",
                        "nvidia.com/gpumem-percentage",
                        "example.com/foo")))
            .ofSizeBetween(0, 4);
    Gen<String> q = quantities();
    return in -> {
      Map<String, String> m = new LinkedHashMap<>();
      keys.generate(in).forEach(k -> m.put(k, q.generate(in)));
      return m;
    };
  }

  /** A map as absent, JSON null, or an object (possibly empty). */
  private static void putMap(ObjectNode parent, String field, int how, Map<String, String> m) {
    if (how == 0) {
      return;
    }
    if (how == 1) {
      parent.putNull(field);
      return;
    }
    ObjectNode o = parent.putObject(field);
    m.forEach(o::put);
  }

  static Gen<ObjectNode> pods() {
    Gen<String> names = Gens.names(1, 30);
    Gen<Integer> how = SourceDSL.integers().between(0, 2);
    Gen<Boolean> coin = SourceDSL.booleans().all();
    Gen<Map<String, String>> maps = stringMaps();
    Gen<Map<String, String>> qmaps = quantityMaps();
    Gen<String> phase =
        Generate.pick(
            List.of("Pending", "Running", "Succeeded", "Failed", "Unknown", "", "Weird", "-"));
    Gen<String> group = Generate.pick(List.of("", "g", "training-job"));
    Gen<Integer> priority = SourceDSL.integers().between(-10, 2_000_000_000);
    Gen<String> policy = Generate.pick(List.of("", "Never", "PreemptLowerPriority"));
    Gen<Integer> containerCount = SourceDSL.integers().between(0, 3);
    Gen<String> condType = Generate.pick(List.of("PodScheduled", "Ready"));
    Gen<String> reason = Generate.pick(List.of("Unschedulable", "SchedulerError", ""));
    Gen<String> restartPolicy =
        Generate.pick(Arrays.asList(null, null, "Always", "Always", "Never", "OnFailure", ""));
    Gen<String> draResource =
        Generate.pick(List.of("nvidia.com/gpu", "example.com/npu", "", "nvidia.com/gpumem"));
    return in -> {
      ObjectNode pod = F.objectNode();
      pod.put("apiVersion", "v1").put("kind", "Pod");
      ObjectNode meta = pod.putObject("metadata");
      meta.put("name", names.generate(in)).put("namespace", names.generate(in));
      if (coin.generate(in)) {
        meta.put("uid", names.generate(in));
      }
      if (coin.generate(in)) {
        meta.put("resourceVersion", "12345");
      }
      putMap(meta, "labels", how.generate(in), maps.generate(in));
      putMap(meta, "annotations", how.generate(in), maps.generate(in));
      int deletion = how.generate(in);
      if (deletion == 1) {
        meta.putNull("deletionTimestamp");
      } else if (deletion == 2) {
        meta.put("deletionTimestamp", Gens.rfc3339Seconds().generate(in).toString());
      }
      if (coin.generate(in)) {
        ObjectNode spec = pod.putObject("spec");
        if (coin.generate(in)) {
          spec.put("nodeName", coin.generate(in) ? names.generate(in) : "");
        }
        if (coin.generate(in)) {
          spec.putObject("schedulingGroup").put("podGroupName", group.generate(in));
        }
        if (coin.generate(in)) {
          spec.put("priority", priority.generate(in));
        }
        if (coin.generate(in)) {
          spec.put("preemptionPolicy", policy.generate(in));
        }
        if (coin.generate(in)) { // PodView.resourceClaimNames: a claim named, or a template
          var claims = spec.putArray("resourceClaims");
          for (int i = how.generate(in); i > 0; i--) {
            ObjectNode c = claims.addObject().put("name", "claim-" + i);
            if (coin.generate(in)) {
              c.put("resourceClaimName", coin.generate(in) ? names.generate(in) : "");
            } else {
              c.put("resourceClaimTemplateName", names.generate(in));
            }
          }
        }
        for (String list : List.of("initContainers", "containers")) {
          int n = containerCount.generate(in);
          if (n == 0 && list.equals("initContainers") && coin.generate(in)) {
            continue; // absent list (containers is required: client-java's model rejects a spec
            // without it)
          }
          var arr = spec.putArray(list);
          for (int i = 0; i < n; i++) {
            ObjectNode c = arr.addObject();
            c.put("name", names.generate(in));
            if (coin.generate(in)) {
              c.put("image", "repo/img:" + i);
            }
            String restart = restartPolicy.generate(in);
            if (restart != null) {
              c.put("restartPolicy", restart);
            }
            if (coin.generate(in)) {
              ObjectNode r = c.putObject("resources");
              putMap(r, "limits", how.generate(in), qmaps.generate(in));
              putMap(r, "requests", how.generate(in), qmaps.generate(in));
            }
          }
        }
      }
      if (coin.generate(in)) {
        String p = phase.generate(in);
        ObjectNode status = pod.putObject("status");
        if (!"-".equals(p)) {
          status.put("phase", p);
        }
        if (coin.generate(in)) { // PodView.draResources: what kube-scheduler gave through DRA
          ObjectNode dra = status.putObject("extendedResourceClaimStatus");
          dra.put("resourceClaimName", names.generate(in) + "-extended-resources-x");
          var mappings = dra.putArray("requestMappings");
          for (int i = how.generate(in); i > 0; i--) {
            mappings
                .addObject()
                .put("containerName", names.generate(in))
                .put("resourceName", draResource.generate(in))
                .put("requestName", "container-" + i + "-request-0");
          }
        }
        if (coin.generate(in)) { // PodView.resourceClaimNames: claims generated from templates
          var generated = status.putArray("resourceClaimStatuses");
          for (int i = how.generate(in); i > 0; i--) {
            ObjectNode c = generated.addObject().put("name", "claim-" + i);
            if (coin.generate(in)) {
              c.put("resourceClaimName", coin.generate(in) ? names.generate(in) : "");
            }
          }
        }
        var conditions = status.putArray("conditions"); // PodView.unschedulable
        for (int i = how.generate(in); i > 0; i--) {
          ObjectNode c = conditions.addObject();
          c.put("type", condType.generate(in)).put("status", coin.generate(in) ? "False" : "True");
          if (coin.generate(in)) {
            c.put("reason", reason.generate(in));
          }
        }
      }
      return pod;
    };
  }

  static Gen<ObjectNode> nodes() {
    Gen<String> names = Gens.names(1, 30);
    Gen<Integer> how = SourceDSL.integers().between(0, 2);
    Gen<Map<String, String>> maps = stringMaps();
    Gen<Map<String, String>> qmaps = quantityMaps();
    return in -> {
      ObjectNode node = F.objectNode();
      node.put("apiVersion", "v1").put("kind", "Node");
      ObjectNode meta = node.putObject("metadata");
      meta.put("name", names.generate(in));
      putMap(meta, "labels", how.generate(in), maps.generate(in));
      putMap(meta, "annotations", how.generate(in), maps.generate(in));
      if (how.generate(in) > 0) {
        putMap(node.putObject("status"), "allocatable", how.generate(in), qmaps.generate(in));
      }
      return node;
    };
  }

  private static PodView viaJsonViews(JsonNode pod) throws Exception {
    return JsonViews.podView(JsonViews.readObject(pod.toString().getBytes(StandardCharsets.UTF_8)));
  }

  private static PodView viaClientJava(JsonNode pod) {
    return KubernetesViews.podView(JSON.deserialize(pod.toString(), V1Pod.class));
  }

  /** Quantities with trailing zeros stripped, so equal numbers compare equal. */
  static PodView normalized(PodView v) {
    UnaryOperator<List<ContainerView>> cs =
        l ->
            l.stream()
                .map(
                    c ->
                        new ContainerView(
                            c.name(),
                            c.image(),
                            normalized(c.limits()),
                            normalized(c.requests()),
                            c.restartPolicy()))
                .toList();
    return v.toBuilder()
        .initContainers(cs.apply(v.initContainers()))
        .containers(cs.apply(v.containers()))
        .build();
  }

  static NodeView normalized(NodeView v) {
    return new NodeView(v.name(), v.labels(), v.annotations(), normalized(v.allocatable()));
  }

  private static Map<String, BigDecimal> normalized(Map<String, BigDecimal> m) {
    Map<String, BigDecimal> out = new LinkedHashMap<>();
    m.forEach((k, q) -> out.put(k, q.signum() == 0 ? BigDecimal.ZERO : q.stripTrailingZeros()));
    return out;
  }

  @Test
  void podMappersAgree() {
    Props.qt(400)
        .forAll(pods())
        .checkAssert(
            pod ->
                Props.unchecked(
                    () ->
                        assertThat(normalized(viaJsonViews(pod)))
                            .as(pod.toString())
                            .isEqualTo(normalized(viaClientJava(pod)))));
  }

  @Test
  void nodeMappersAgree() {
    Props.qt(400)
        .forAll(nodes())
        .checkAssert(
            node ->
                Props.unchecked(
                    () -> {
                      NodeView schemaFree =
                          JsonViews.nodeView(
                              JsonViews.readObject(
                                  node.toString().getBytes(StandardCharsets.UTF_8)));
                      NodeView typed =
                          KubernetesViews.nodeView(JSON.deserialize(node.toString(), V1Node.class));
                      assertThat(normalized(schemaFree))
                          .as(node.toString())
                          .isEqualTo(normalized(typed));
                    }));
  }

  /**
   * The one known disagreement, kept visible: {@code 1Ei} is 2^60 = 1152921504606846976 for Go's
   * {@code resource.Quantity} and JsonViews, while client-java 27's {@code Quantity} computes the
   * binary base with 16-digit precision. Irrelevant to device counts and MiB; if client-java
   * becomes exact this test fails and {@code Ei} goes back into the generated suffixes.
   */
  @Test
  void clientJavaRoundsTheEiSuffix() throws Exception {
    ObjectNode node = F.objectNode();
    node.putObject("metadata").put("name", "n");
    node.putObject("status").putObject("allocatable").put("example.com/huge", "1Ei");
    NodeView schemaFree = JsonViews.nodeView(node);
    NodeView typed = KubernetesViews.nodeView(JSON.deserialize(node.toString(), V1Node.class));
    assertThat(schemaFree.allocatable().get("example.com/huge"))
        .isEqualByComparingTo(BigDecimal.valueOf(2).pow(60));
    assertThat(typed.allocatable().get("example.com/huge"))
        .isEqualByComparingTo("1152921504606847000");
  }

  /**
   * Teeth: the generator reaches the fields compared; a mapper that dropped one would be caught.
   */
  @Test
  void theComparisonCatchesAMapperThatDropsAField() {
    List<UnaryOperator<PodView>> broken =
        List.of(
            v -> v.toBuilder().deleting(false).build(),
            v -> v.toBuilder().resourceClaimNames(null).build(),
            v -> v.toBuilder().nodeName(null).build(),
            v -> v.toBuilder().podGroupName(null).build(),
            v -> v.toBuilder().phase(PodView.Phase.PENDING).build(),
            v -> v.toBuilder().annotations(Map.of()).build(),
            v ->
                v.toBuilder()
                    .initContainers(
                        v.initContainers().stream().map(c -> c.withRestartPolicy(null)).toList())
                    .build(),
            v ->
                v.toBuilder()
                    .containers(
                        v.containers().stream()
                            .map(
                                c -> new ContainerView(c.name(), c.image(), Map.of(), c.requests()))
                            .toList())
                    .build());
    for (UnaryOperator<PodView> drop : broken) {
      Props.expectFalsified(
          400,
          qt ->
              qt.forAll(pods())
                  .checkAssert(
                      pod ->
                          Props.unchecked(
                              () ->
                                  assertThat(normalized(drop.apply(viaJsonViews(pod))))
                                      .isEqualTo(normalized(viaClientJava(pod))))));
    }
  }
}
