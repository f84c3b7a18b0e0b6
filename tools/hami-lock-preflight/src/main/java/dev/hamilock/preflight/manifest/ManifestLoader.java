package dev.hamilock.preflight.manifest;

import static dev.hamilock.core.internal.Checks.requireNonBlank;

import java.io.IOException;
import java.io.StringReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads multi-document YAML or JSON (JSON is read as YAML) into {@link ManifestDocument}s, keeping
 * each node's line. Uses the SnakeYAML that client-java brings (composition only, so no object
 * construction from tags; SnakeYAML's alias-count limit guards against alias bombs).
 *
 * <p>Rules: documents are numbered from 1 in file order; a document that is empty (only comments)
 * is skipped but still counted; a non-empty document whose top level is not a mapping, a duplicate
 * mapping key (which kubectl rejects too), a recursive alias, a YAML syntax error and an unreadable
 * file are {@link ManifestException}s naming the file and the document number. Merge keys ({@code
 * <<}) are not expanded.
 */
public final class ManifestLoader {

  private ManifestLoader() {}

  /**
   * Loads every document of a file.
   *
   * @param file a YAML or JSON file, UTF-8
   * @return the file's documents in order (possibly none, for a file of only comments)
   * @throws ManifestException if the file cannot be read or a document is invalid; the exception's
   *     source is {@code file.toString()}
   */
  public static List<ManifestDocument> load(Path file) throws ManifestException {
    Objects.requireNonNull(file, "file");
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ManifestException(
          file.toString(),
          OptionalInt.empty(),
          "cannot read file: "
              + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : " " + e.getMessage()),
          e);
    }
    return parse(file.toString(), text);
  }

  /**
   * Parses YAML/JSON text.
   *
   * @param source label used in locations and errors, usually the file name; not blank
   * @param text the content
   * @return the documents in order
   * @throws ManifestException if a document is invalid (see the class description)
   */
  public static List<ManifestDocument> parse(String source, String text) throws ManifestException {
    requireNonBlank(source, "source");
    Objects.requireNonNull(text, "text");
    List<ManifestDocument> out = new ArrayList<>();
    int number = 0;
    Iterator<Node> it = yaml().composeAll(new StringReader(text)).iterator();
    while (true) {
      Node node;
      try {
        if (!it.hasNext()) {
          break;
        }
        node = it.next();
      } catch (YAMLException e) {
        throw new ManifestException(source, OptionalInt.of(number + 1), describe(e, 0), e);
      }
      number++;
      Converter c = new Converter(source, number, 0);
      Object root = c.convert(node, "");
      if (root == null) {
        continue;
      }
      if (!(root instanceof Map)) {
        throw new ManifestException(
            source,
            OptionalInt.of(number),
            "top level is a "
                + kindOf(node)
                + ", expected a mapping (line "
                + (node.getStartMark().getLine() + 1)
                + ")",
            null);
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> map = (Map<String, Object>) root;
      out.add(new ManifestDocument(source, number, map, "", c.lines, c.literalLines));
    }
    return List.copyOf(out);
  }

  /**
   * Parses YAML carried as a string inside another document, e.g. the {@code
   * KubeSchedulerConfiguration} in {@code data["config.yaml"]} of a ConfigMap.
   *
   * @param carrier the outer document
   * @param path path of the string inside {@code carrier} (as built by {@link YamlPath})
   * @param text the string's value
   * @return the embedded document (only the first, as kube-scheduler reads only one), with paths
   *     prefixed by {@code path} and lines translated to the carrier's file when the string was
   *     written as a literal block ({@code |})
   * @throws ManifestException if the text is not valid YAML or its top level is not a mapping;
   *     names the carrier's file, document number and path
   */
  public static ManifestDocument parseEmbedded(ManifestDocument carrier, String path, String text)
      throws ManifestException {
    Objects.requireNonNull(carrier, "carrier");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(text, "text");
    OptionalInt contentLine = carrier.literalContentLine(path);
    int offset = contentLine.isPresent() ? contentLine.getAsInt() - 1 : -1;
    OptionalInt doc = OptionalInt.of(carrier.documentNumber());
    String where = YamlPath.join(carrier.pathPrefix(), path);
    Node node;
    try {
      Iterator<Node> it = yaml().composeAll(new StringReader(text)).iterator();
      node = it.hasNext() ? it.next() : null;
    } catch (YAMLException e) {
      throw new ManifestException(
          carrier.source(),
          doc,
          "embedded YAML in " + where + ": " + describe(e, Math.max(offset, 0)),
          e);
    }
    Converter c = new Converter(carrier.source(), carrier.documentNumber(), offset);
    Object root = node == null ? null : c.convert(node, "");
    if (!(root instanceof Map)) {
      throw new ManifestException(
          carrier.source(),
          doc,
          "embedded YAML in "
              + where
              + " is "
              + (node == null ? "empty" : "a " + kindOf(node))
              + ", expected a mapping",
          null);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) root;
    return new ManifestDocument(
        carrier.source(),
        carrier.documentNumber(),
        map,
        where,
        offset < 0 ? Map.of() : c.lines,
        Map.of());
  }

  private static Yaml yaml() {
    LoaderOptions options = new LoaderOptions();
    options.setAllowRecursiveKeys(false);
    return new Yaml(options);
  }

  private static String describe(YAMLException e, int lineOffset) {
    if (e instanceof MarkedYAMLException m) {
      Mark mark = m.getProblemMark() != null ? m.getProblemMark() : m.getContextMark();
      String problem = m.getProblem() != null ? m.getProblem() : String.valueOf(m.getContext());
      return mark == null
          ? problem
          : problem
              + " (line "
              + (mark.getLine() + 1 + lineOffset)
              + ", column "
              + (mark.getColumn() + 1)
              + ")";
    }
    return String.valueOf(e.getMessage());
  }

  private static String kindOf(Node node) {
    if (node instanceof SequenceNode) {
      return "sequence";
    }
    return node instanceof ScalarNode ? "scalar" : "mapping";
  }

  /** Converts one composed node tree into generic values, recording lines by path. */
  private static final class Converter {
    private final String source;
    private final int number;

    /** added to 1-based node lines; negative means "lines unknown" (not recorded). */
    private final int lineOffset;

    final Map<String, Integer> lines = new HashMap<>();
    final Map<String, Integer> literalLines = new HashMap<>();
    private final Set<Node> active = Collections.newSetFromMap(new IdentityHashMap<>());

    Converter(String source, int number, int lineOffset) {
      this.source = source;
      this.number = number;
      this.lineOffset = lineOffset;
    }

    Object convert(Node node, String path) throws ManifestException {
      if (lineOffset >= 0) {
        lines.put(path, node.getStartMark().getLine() + 1 + lineOffset);
      }
      if (node instanceof ScalarNode s) {
        if (s.getScalarStyle() == DumperOptions.ScalarStyle.LITERAL && lineOffset >= 0) {
          literalLines.put(path, s.getStartMark().getLine() + 2 + lineOffset);
        }
        return scalar(s);
      }
      if (!active.add(node)) {
        throw error("recursive alias", path, "");
      }
      try {
        if (node instanceof SequenceNode seq) {
          List<Object> out = new ArrayList<>(seq.getValue().size());
          int i = 0;
          for (Node child : seq.getValue()) {
            out.add(convert(child, YamlPath.index(path, i++)));
          }
          return Collections.unmodifiableList(out);
        }
        MappingNode map = (MappingNode) node;
        Map<String, Object> out = new LinkedHashMap<>();
        for (NodeTuple t : map.getValue()) {
          Node keyNode = t.getKeyNode();
          if (!(keyNode instanceof ScalarNode ks)) {
            throw error("non-scalar mapping key", path, lineText(keyNode));
          }
          String key = ks.getValue();
          if (out.containsKey(key)) {
            throw error("duplicate key \"" + key + "\"", path, lineText(keyNode));
          }
          String childPath = YamlPath.key(path, key);
          out.put(key, convert(t.getValueNode(), childPath));
          if (lineOffset >= 0) {
            // point at the key's line ("plugins:"), not where its value starts
            lines.put(childPath, keyNode.getStartMark().getLine() + 1 + lineOffset);
          }
        }
        return Collections.unmodifiableMap(out);
      } finally {
        active.remove(node);
      }
    }

    private ManifestException error(String what, String path, String line) {
      String at = path.isEmpty() ? "the top level" : path;
      return new ManifestException(source, OptionalInt.of(number), what + " at " + at + line, null);
    }

    private String lineText(Node node) {
      return lineOffset < 0
          ? ""
          : " (line " + (node.getStartMark().getLine() + 1 + lineOffset) + ")";
    }

    private static Object scalar(ScalarNode s) {
      String v = s.getValue();
      Tag tag = s.getTag();
      if (Tag.NULL.equals(tag)) {
        return null;
      }
      if (Tag.BOOL.equals(tag)) {
        String l = v.toLowerCase(Locale.ROOT);
        return l.equals("true") || l.equals("yes") || l.equals("on");
      }
      if (Tag.INT.equals(tag)) {
        return integer(v);
      }
      if (Tag.FLOAT.equals(tag)) {
        try {
          return new BigDecimal(v.replace("_", ""));
        } catch (NumberFormatException e) {
          return v;
        }
      }
      return v;
    }

    private static Object integer(String text) {
      String t = text.replace("_", "");
      boolean negative = t.startsWith("-");
      if (negative || t.startsWith("+")) {
        t = t.substring(1);
      }
      int radix = 10;
      if (t.startsWith("0x")) {
        radix = 16;
        t = t.substring(2);
      } else if (t.startsWith("0b")) {
        radix = 2;
        t = t.substring(2);
      } else if (t.startsWith("0o")) {
        radix = 8;
        t = t.substring(2);
      } else if (t.length() > 1 && t.startsWith("0")) {
        radix = 8;
        t = t.substring(1);
      }
      try {
        BigInteger b = new BigInteger(t, radix);
        if (negative) {
          b = b.negate();
        }
        return b.bitLength() < 64 ? (Object) b.longValue() : b;
      } catch (NumberFormatException e) {
        return text; // e.g. YAML 1.1 sexagesimal 1:30 — keep the text
      }
    }
  }
}
