package dev.hamilock.extender.v1;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Reads the copied fixtures of src/test/resources/fixtures (see its README for the F-NN ids). */
public final class Fixtures {
  private Fixtures() {}

  /**
   * @param name file name
   * @return its bytes
   */
  public static byte[] bytes(String name) {
    try (InputStream in = Fixtures.class.getResourceAsStream("/fixtures/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture " + name);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * @param name file name
   * @return its UTF-8 text, byte-exact
   */
  public static String text(String name) {
    return new String(bytes(name), StandardCharsets.UTF_8);
  }

  /**
   * @param s text
   * @return UTF-8 bytes
   */
  public static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
