package dev.hamilock.examples.extender;

import dev.hamilock.testkit.ApiServerEmulator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The extender tests' fixtures under {@code /fixtures/}: read one, or seed an emulator with one.
 */
final class ExtenderFixtures {
  private ExtenderFixtures() {}

  /** Creates every document of a fixture YAML in the emulator (namespaces as needed). */
  static void seed(ApiServerEmulator k8s, String fixture) throws IOException {
    Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
    for (Object doc : yaml.loadAll(fixture(fixture))) {
      if (doc instanceof Map<?, ?> m) {
        Object meta = m.get("metadata");
        if (meta instanceof Map<?, ?> md
            && md.get("namespace") instanceof String ns
            && k8s.get("namespaces", null, ns).isEmpty()) {
          k8s.createNamespace(ns);
        }
        k8s.create(m);
      }
    }
  }

  /**
   * @return the fixture's text (UTF-8)
   */
  static String fixture(String name) throws IOException {
    try (InputStream in = ExtenderFixtures.class.getResourceAsStream("/fixtures/" + name)) {
      return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
