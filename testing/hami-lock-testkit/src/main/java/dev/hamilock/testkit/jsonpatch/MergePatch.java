package dev.hamilock.testkit.jsonpatch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * RFC 7386 JSON Merge Patch as {@code evanphx/json-patch.v4 MergePatch} implements it (used by
 * kube-apiserver for {@code application/merge-patch+json}): a {@code null} member removes the key,
 * objects merge recursively, everything else (arrays included) replaces, and {@code null} members
 * inside newly inserted objects are pruned.
 */
public final class MergePatch {
  private MergePatch() {}

  /**
   * Applies {@code patch} to a copy of {@code document}; neither argument is modified.
   *
   * @param document the target, usually a JSON object
   * @param patch the merge patch; an object merges, an array replaces the whole document
   * @throws MalformedPatchException if {@code patch} is JSON null or a scalar (evanphx {@code
   *     ErrBadJSONPatch}, 400 BadRequest at the apiserver)
   */
  public static JsonNode apply(JsonNode document, JsonNode patch) throws MalformedPatchException {
    Objects.requireNonNull(document, "document");
    if (patch == null || patch.isNull() || patch.isValueNode() || patch.isMissingNode()) {
      throw new MalformedPatchException("Invalid JSON Patch");
    }
    if (patch.isArray()) {
      return pruneNulls(patch.deepCopy());
    }
    if (!document.isObject()) {
      return pruneNulls(patch.deepCopy());
    }
    ObjectNode out = ((ObjectNode) document).deepCopy();
    mergeInto(out, (ObjectNode) patch);
    return out;
  }

  private static void mergeInto(ObjectNode doc, ObjectNode patch) {
    Iterator<Map.Entry<String, JsonNode>> it = patch.properties().iterator();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode pv = e.getValue();
      if (pv.isNull()) {
        doc.remove(e.getKey());
        continue;
      }
      JsonNode cur = doc.get(e.getKey());
      if (cur != null && cur.isObject() && pv.isObject()) {
        mergeInto((ObjectNode) cur, (ObjectNode) pv);
      } else {
        doc.set(e.getKey(), pruneNulls(pv.deepCopy()));
      }
    }
  }

  /** Removes null members of objects recursively (array elements that are null are kept). */
  static JsonNode pruneNulls(JsonNode node) {
    if (node.isObject()) {
      ObjectNode o = (ObjectNode) node;
      List<String> drop = new ArrayList<>();
      Iterator<Map.Entry<String, JsonNode>> it = o.properties().iterator();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        if (e.getValue().isNull()) {
          drop.add(e.getKey());
        } else {
          pruneNulls(e.getValue());
        }
      }
      o.remove(drop);
    } else if (node.isArray()) {
      for (JsonNode el : (ArrayNode) node) {
        pruneNulls(el);
      }
    }
    return node;
  }
}
