package dev.hamilock.device.spi;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Loads real annotation values copied from fixtures/real-values.md (see fixtures/README.md). */
public final class Fixtures {
  private Fixtures() {}

  public static String value(String id) {
    return read("/fixtures/" + id + ".value");
  }

  public static Map<String, String> kv(String id) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String line : read("/fixtures/" + id + ".kv").split("\n")) {
      if (!line.isEmpty()) {
        int i = line.indexOf(": ");
        m.put(line.substring(0, i), line.substring(i + 2));
      }
    }
    return m;
  }

  private static String read(String path) {
    try (InputStream in = Fixtures.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalArgumentException("missing fixture " + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
