package dev.hamilock.core.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AnnotationPatchesTest {

  @Test
  void pointerEscapesTildeBeforeSlash() {
    assertThat(AnnotationPatches.pointer("hami.io/mutex.lock"))
        .isEqualTo("/metadata/annotations/hami.io~1mutex.lock");
    assertThat(AnnotationPatches.pointer("a~1/b")).isEqualTo("/metadata/annotations/a~01~1b");
  }

  @Test
  void bodiesAreTheConformanceVectorsBytes() {
    String p = "\"/metadata/annotations/hami.io~1mutex.lock\"";
    assertThat(AnnotationPatches.create("hami.io/mutex.lock", "v"))
        .isEqualTo(
            "[{\"op\":\"test\",\"path\":"
                + p
                + ",\"value\":null},{\"op\":\"add\",\"path\":"
                + p
                + ",\"value\":\"v\"}]");
    assertThat(AnnotationPatches.replace("hami.io/mutex.lock", "a", "b"))
        .isEqualTo(
            "[{\"op\":\"test\",\"path\":"
                + p
                + ",\"value\":\"a\"},{\"op\":\"replace\",\"path\":"
                + p
                + ",\"value\":\"b\"}]");
    assertThat(AnnotationPatches.delete("hami.io/mutex.lock", "a"))
        .isEqualTo(
            "[{\"op\":\"test\",\"path\":"
                + p
                + ",\"value\":\"a\"},{\"op\":\"remove\",\"path\":"
                + p
                + "}]");
    assertThat(AnnotationPatches.mergeCreate("hami.io/mutex.lock", "v", "42"))
        .isEqualTo(
            "{\"metadata\":{\"annotations\":{\"hami.io/mutex.lock\":\"v\"},"
                + "\"resourceVersion\":\"42\"}}");
  }

  @Test
  void quoteEscapesQuotesBackslashesAndControlCharacters() {
    assertThat(AnnotationPatches.quote("a\"b\\c\td\u0001\u2028é<>&="))
        .isEqualTo("\"a\\\"b\\\\c\\td\\u0001\\u2028é<>&=\"");
  }
}
