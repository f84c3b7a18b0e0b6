package dev.hamilock.preflight.manifest;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One parsed YAML/JSON document, as generic values: mappings are {@code Map<String, Object>}
 * (insertion-ordered), sequences {@code List<Object>}, scalars {@code String}, {@code Long}, {@link
 * java.math.BigInteger}, {@link java.math.BigDecimal}, {@code Boolean} or {@code null} (YAML 1.1
 * core resolution, as SnakeYAML performs it). Line numbers of every node are kept so that {@link
 * #location(String)} can point the user at the right line.
 *
 * <p>A document may be <em>embedded</em>: YAML carried as a string inside another document (the
 * {@code KubeSchedulerConfiguration} in {@code data["config.yaml"]} of the {@code hami-scheduler}
 * ConfigMap). Its paths are then prefixed with the carrying path and its lines translated to lines
 * of the outer file when the string was a literal block ({@code |}).
 *
 * <p>Instances are immutable as far as this class is concerned; callers must not modify {@link
 * #root()}.
 */
public final class ManifestDocument {

  private final String source;
  private final int documentNumber;
  private final Map<String, Object> root;
  private final String pathPrefix;
  private final Map<String, Integer> lines;
  private final Map<String, Integer> literalContentLines;

  ManifestDocument(
      String source,
      int documentNumber,
      Map<String, Object> root,
      String pathPrefix,
      Map<String, Integer> lines,
      Map<String, Integer> literalContentLines) {
    this.source = Objects.requireNonNull(source, "source");
    this.documentNumber = documentNumber;
    this.root = Objects.requireNonNull(root, "root");
    this.pathPrefix = Objects.requireNonNull(pathPrefix, "pathPrefix");
    this.lines = Map.copyOf(lines);
    this.literalContentLines = Map.copyOf(literalContentLines);
  }

  /**
   * @return the file name (or label) the document came from
   */
  public String source() {
    return source;
  }

  /**
   * @return the 1-based number of this document in its file (an embedded document has its carrier's
   *     number)
   */
  public int documentNumber() {
    return documentNumber;
  }

  /**
   * @return the document's top-level mapping
   */
  public Map<String, Object> root() {
    return root;
  }

  /**
   * @return the path of the string this document was embedded in, or empty for a top-level document
   */
  public String pathPrefix() {
    return pathPrefix;
  }

  /**
   * @return the document's {@code kind}, when it is a non-blank string
   */
  public Optional<String> kind() {
    return Values.string(root.get("kind"));
  }

  /**
   * @return the document's {@code apiVersion}, when it is a non-blank string
   */
  public Optional<String> apiVersion() {
    return Values.string(root.get("apiVersion"));
  }

  /**
   * @return the API group of {@code apiVersion} ({@code ""} for the core group), when apiVersion is
   *     present
   */
  public Optional<String> apiGroup() {
    return apiVersion().map(v -> v.contains("/") ? v.substring(0, v.indexOf('/')) : "");
  }

  /**
   * @return {@code metadata.name}, when present
   */
  public Optional<String> name() {
    return Values.string(Values.at(root, "metadata", "name"));
  }

  /**
   * @return {@code metadata.namespace}, when present
   */
  public Optional<String> namespace() {
    return Values.string(Values.at(root, "metadata", "namespace"));
  }

  /**
   * A location inside this document.
   *
   * @param path path relative to {@link #root()} as built by {@link YamlPath}; empty for the root
   * @return the location, with the line of the node at {@code path} (or of its nearest ancestor
   *     that has one) when known
   */
  public Location location(String path) {
    Objects.requireNonNull(path, "path");
    return new Location(source, documentNumber, YamlPath.join(pathPrefix, path), lineOf(path));
  }

  /**
   * @return a short label for messages: {@code Kind namespace/name} or {@code Kind name}
   */
  public String describe() {
    String k = kind().orElse("document");
    String n = name().orElse("(unnamed)");
    return namespace().map(ns -> k + " " + ns + "/" + n).orElse(k + " " + n);
  }

  OptionalInt lineOf(String path) {
    String p = path;
    while (true) {
      Integer l = lines.get(p);
      if (l != null) {
        return OptionalInt.of(l);
      }
      if (p.isEmpty()) {
        return OptionalInt.empty();
      }
      p = parentPath(p);
    }
  }

  OptionalInt literalContentLine(String path) {
    Integer l = literalContentLines.get(path);
    return l == null ? OptionalInt.empty() : OptionalInt.of(l);
  }

  private static String parentPath(String path) {
    if (path.endsWith("\"]")) {
      return path.substring(0, path.lastIndexOf("[\""));
    }
    if (path.endsWith("]")) {
      return path.substring(0, path.lastIndexOf('['));
    }
    int dot = path.lastIndexOf('.');
    return dot < 0 ? "" : path.substring(0, dot);
  }
}
