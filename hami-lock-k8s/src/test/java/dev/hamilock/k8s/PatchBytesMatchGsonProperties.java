package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.strings;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.hamilock.core.annotation.AnnotationPatches;
import dev.hamilock.testing.generators.Props;
import org.junit.jupiter.api.Test;

/**
 * Core's {@link AnnotationPatches} writes the bytes client-java's Gson wrote before the extraction
 * (the same wire bytes for every client): each body equals the one Gson's {@code toString()} makes
 * from the same tree, for any key and value, control characters and U+2028 included.
 */
class PatchBytesMatchGsonProperties {

  @Test
  void everyBodyEqualsGsonsSerialisationOfTheSameTree() {
    Props.qt(300)
        .forAll(
            strings().allPossible().ofLengthBetween(0, 12),
            strings().basicMultilingualPlaneAlphabet().ofLengthBetween(0, 12))
        .checkAssert(
            (key, value) -> {
              String p = AnnotationPatches.pointer(key);
              assertThat(AnnotationPatches.create(key, value))
                  .isEqualTo(patch(op("test", p, JsonNull.INSTANCE), op("add", p, value)));
              assertThat(AnnotationPatches.replace(key, value, key))
                  .isEqualTo(patch(op("test", p, value), op("replace", p, key)));
              assertThat(AnnotationPatches.delete(key, value))
                  .isEqualTo(patch(op("test", p, value), op("remove", p, null)));
              JsonObject annotations = new JsonObject();
              annotations.addProperty(key, value);
              JsonObject meta = new JsonObject();
              meta.add("annotations", annotations);
              meta.addProperty("resourceVersion", value);
              JsonObject merge = new JsonObject();
              merge.add("metadata", meta);
              assertThat(AnnotationPatches.mergeCreate(key, value, value))
                  .isEqualTo(merge.toString());
            });
  }

  private static String patch(JsonObject first, JsonObject second) {
    JsonArray a = new JsonArray();
    a.add(first);
    a.add(second);
    return a.toString();
  }

  private static JsonObject op(String op, String path, Object value) {
    JsonObject o = new JsonObject();
    o.addProperty("op", op);
    o.addProperty("path", path);
    if (value instanceof String s) {
      o.add("value", new JsonPrimitive(s));
    } else if (value != null) {
      o.add("value", JsonNull.INSTANCE);
    }
    return o;
  }
}
