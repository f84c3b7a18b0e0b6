package dev.hamilock.preflight;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.manifest.ManifestException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Test fixtures: src/test/resources/guide (copied from the shared fixtures) and pitfalls (derived).
 */
final class Fixtures {

  static final String CONFIG = "scheduler-config.yaml";
  static final String GANG = "gang-training.yaml";
  static final String RBAC = "rbac-podgroup-reader.yaml";
  static final String ARGS = "extender-args.yaml";
  static final List<String> GUIDE = List.of(CONFIG, GANG, RBAC, ARGS);

  private Fixtures() {}

  static Path resource(String name) {
    URL url = Fixtures.class.getResource("/" + name);
    if (url == null) {
      throw new IllegalArgumentException("no test resource " + name);
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static List<Path> guide() {
    return GUIDE.stream().map(n -> resource("guide/" + n)).toList();
  }

  /**
   * The guide's files with {@code replaced} swapped for a pitfall variant (and {@code extra}
   * added).
   */
  static List<Path> guideWith(String replaced, String variant, String... extra) {
    List<Path> out = new ArrayList<>();
    for (String n : GUIDE) {
      out.add(n.equals(replaced) ? resource("pitfalls/" + variant) : resource("guide/" + n));
    }
    for (String e : extra) {
      out.add(resource("pitfalls/" + e));
    }
    return out;
  }

  static PreflightReport run(List<Path> files) throws ManifestException {
    return Preflight.standard().run(files);
  }

  static List<Finding> of(PreflightReport r, String checkId) {
    return r.findings().stream().filter(f -> f.checkId().equals(checkId)).toList();
  }
}
