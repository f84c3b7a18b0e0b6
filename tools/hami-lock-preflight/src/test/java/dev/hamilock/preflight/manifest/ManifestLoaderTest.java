package dev.hamilock.preflight.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ManifestLoaderTest {

  @Test
  void multiDocumentYamlKeepsNumbersPathsAndLines() throws ManifestException {
    String text =
        "# comment\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n---\n# only a comment\n---\n"
            + "kind: Pod\nspec:\n  containers:\n    - name: c\n      resources:\n        limits:\n"
            + "          nvidia.com/gpumem: 16Gi\n";
    List<ManifestDocument> docs = ManifestLoader.parse("in.yaml", text);

    assertThat(docs).hasSize(2);
    assertThat(docs.get(0).documentNumber()).isEqualTo(1);
    assertThat(docs.get(1).documentNumber()).isEqualTo(3);
    Location l = docs.get(1).location("spec.containers[0].resources.limits[\"nvidia.com/gpumem\"]");
    assertThat(l.line()).hasValue(15);
    assertThat(l.describe())
        .isEqualTo(
            "in.yaml#3 spec.containers[0].resources.limits[\"nvidia.com/gpumem\"] (line 15)");
    assertThat(docs.get(0).location("metadata.name").line()).hasValue(5);
    // unknown paths fall back to the nearest known ancestor
    assertThat(docs.get(0).location("metadata.labels").line()).hasValue(4);
  }

  @Test
  void scalarsResolveLikeYaml11() throws ManifestException {
    Map<String, Object> root =
        ManifestLoader.parse(
                "s", "a: 3000\nb: \"3000\"\nc: 1.5\nd: true\ne: null\nf: 16Gi\ng: 0x10\n")
            .get(0)
            .root();
    assertThat(root)
        .containsEntry("a", 3000L)
        .containsEntry("b", "3000")
        .containsEntry("d", true)
        .containsEntry("e", null)
        .containsEntry("f", "16Gi")
        .containsEntry("g", 16L);
    assertThat(Values.scalarText(root.get("c"))).isEqualTo("1.5");
    assertThat(Values.integer(root.get("b"))).hasValue(3000);
  }

  @Test
  void jsonIsRead() throws ManifestException {
    List<ManifestDocument> docs =
        ManifestLoader.parse(
            "p.json",
            "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n \"metadata\": {\"name\": \"j\"}}");
    assertThat(docs)
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.kind()).contains("Pod");
              assertThat(d.name()).contains("j");
              assertThat(d.location("metadata").line()).hasValue(2);
            });
  }

  @Test
  void embeddedLiteralBlockMapsLinesToTheOuterFile() throws ManifestException {
    String text =
        "kind: ConfigMap\ndata:\n  config.yaml: |\n    kind: KubeSchedulerConfiguration\n"
            + "    profiles:\n      - schedulerName: x\n";
    ManifestDocument outer = ManifestLoader.parse("cm.yaml", text).get(0);
    String cfg = (String) ((Map<?, ?>) outer.root().get("data")).get("config.yaml");
    ManifestDocument inner =
        ManifestLoader.parseEmbedded(outer, YamlPath.key("data", "config.yaml"), cfg);

    Location l = inner.location("profiles[0].schedulerName");
    assertThat(l.path()).isEqualTo("data[\"config.yaml\"].profiles[0].schedulerName");
    assertThat(l.line()).hasValue(6);
    assertThat(l.document()).isEqualTo(1);
  }

  @Test
  void syntaxErrorNamesFileDocumentAndLine() {
    assertThatThrownBy(() -> ManifestLoader.parse("x.yaml", "a: 1\n---\nb: [1, 2\n"))
        .isInstanceOf(ManifestException.class)
        .hasMessageStartingWith("x.yaml: document 2: ")
        .hasMessageContaining("line")
        .satisfies(e -> assertThat(((ManifestException) e).documentNumber()).hasValue(2));
  }

  @Test
  void duplicateKeyAndNonMappingTopLevelAreInvalid() {
    assertThatThrownBy(() -> ManifestLoader.parse("d.yaml", "metadata:\n  name: a\n  name: b\n"))
        .isInstanceOf(ManifestException.class)
        .hasMessageContaining("d.yaml: document 1: duplicate key \"name\" at metadata (line 3)");
    assertThatThrownBy(() -> ManifestLoader.parse("l.yaml", "- a\n- b\n"))
        .isInstanceOf(ManifestException.class)
        .hasMessageContaining("l.yaml: document 1: top level is a sequence");
  }

  @Test
  void recursiveAliasIsInvalidNotAStackOverflow() {
    assertThatThrownBy(() -> ManifestLoader.parse("r.yaml", "a: &x\n  b: *x\n"))
        .isInstanceOf(ManifestException.class)
        .hasMessageContaining("r.yaml: document 1:");
  }

  @Test
  void pathsQuoteKeysThatAreNotPlain() {
    assertThat(YamlPath.key("", "spec")).isEqualTo("spec");
    assertThat(YamlPath.key("limits", "nvidia.com/gpu")).isEqualTo("limits[\"nvidia.com/gpu\"]");
    assertThat(YamlPath.index("spec.containers", 2)).isEqualTo("spec.containers[2]");
    assertThat(YamlPath.join("data[\"config.yaml\"]", "profiles[0]"))
        .isEqualTo("data[\"config.yaml\"].profiles[0]");
    assertThat(YamlPath.join("items[1]", "[\"x\"]")).isEqualTo("items[1][\"x\"]");
  }
}
