package dev.hamilock.preflight.manifest;

import java.util.regex.Pattern;

/**
 * Builds the path strings used in {@link Location#path()}: plain keys are joined with dots, keys
 * holding other characters (such as {@code nvidia.com/gpumem}) are written as {@code ["key"]}, and
 * sequence elements as {@code [index]}.
 */
public final class YamlPath {

  private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_-]*");

  private YamlPath() {}

  /**
   * Path of a mapping entry.
   *
   * @param parent path of the mapping; empty for the document root
   * @param key the entry's key
   * @return e.g. {@code spec.containers} or {@code limits["nvidia.com/gpu"]}
   */
  public static String key(String parent, String key) {
    if (PLAIN_KEY.matcher(key).matches()) {
      return parent.isEmpty() ? key : parent + "." + key;
    }
    return parent + "[\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"]";
  }

  /**
   * Path of a sequence element.
   *
   * @param parent path of the sequence
   * @param index 0-based element index
   * @return e.g. {@code spec.containers[0]}
   */
  public static String index(String parent, int index) {
    return parent + "[" + index + "]";
  }

  /**
   * Joins a prefix path with a relative path.
   *
   * @param prefix absolute path of the relative path's root; may be empty
   * @param relative path below {@code prefix}; may be empty
   * @return the joined path
   */
  public static String join(String prefix, String relative) {
    if (prefix.isEmpty()) {
      return relative;
    }
    if (relative.isEmpty()) {
      return prefix;
    }
    return relative.startsWith("[") ? prefix + relative : prefix + "." + relative;
  }
}
