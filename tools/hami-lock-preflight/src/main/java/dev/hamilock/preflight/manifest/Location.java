package dev.hamilock.preflight.manifest;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * Where something is in the user's input: a file, a document inside it and a path inside the
 * document.
 *
 * @param source the file name as given on the command line, or a caller-chosen label for text that
 *     did not come from a file; never blank
 * @param document 1-based number of the YAML document inside {@code source} (documents are
 *     separated by {@code ---}; a JSON file is one document); {@code 0} means "the input as a
 *     whole" (used for settings that are absent, e.g. a flag default)
 * @param path path inside the document in {@code kubectl explain} style, e.g. {@code
 *     spec.containers[0].resources.limits["nvidia.com/gpumem"]} or {@code
 *     data["config.yaml"].profiles[0].plugins.queueSort}; empty for the document root
 * @param line 1-based line in {@code source} where the path's node starts, when known
 */
public record Location(String source, int document, String path, OptionalInt line) {

  /**
   * Validates the components.
   *
   * @throws IllegalArgumentException if {@code source} is blank or {@code document} negative
   * @throws NullPointerException if any component is {@code null}
   */
  public Location {
    requireNonBlank(source, "source");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(line, "line");
    checkArgument(document >= 0, "document must be >= 0, was %s", document);
  }

  /**
   * A location standing for a whole input set (no file, no document), e.g. for a default that
   * applies because a setting was absent everywhere.
   *
   * @param label what to show instead of a file name, e.g. {@code "(default)"}
   * @return a location with document {@code 0}, an empty path and no line
   */
  public static Location nowhere(String label) {
    return new Location(label, 0, "", OptionalInt.empty());
  }

  /**
   * Human-readable form: {@code file.yaml#2 spec.containers[0] (line 14)}.
   *
   * @return the location as one line of text
   */
  public String describe() {
    StringBuilder sb = new StringBuilder(source);
    if (document > 0) {
      sb.append('#').append(document);
    }
    if (!path.isEmpty()) {
      sb.append(' ').append(path);
    }
    line.ifPresent(l -> sb.append(" (line ").append(l).append(')'));
    return sb.toString();
  }
}
