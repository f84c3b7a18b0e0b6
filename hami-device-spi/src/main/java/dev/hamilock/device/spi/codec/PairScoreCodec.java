package dev.hamilock.device.spi.codec;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectReader;
import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decoder for GPU pair scores ({@code hami.io/node-nvidia-score}, written by the NVIDIA plugin when
 * {@code ENABLE_TOPOLOGY_SCORE=true}; {@code pkg/device/nvidia/device.go}): {@code
 * [{"uuid":"GPU-0","score":{"GPU-1":100}}, …]} into uuid → (uuid → score), cached per value.
 */
public final class PairScoreCodec {
  private static final ObjectReader READER =
      NodeRegistrationCodec.reader().forType(new TypeReference<List<JsonPair>>() {});
  private static final Cache<String, Object> CACHE =
      CacheBuilder.newBuilder().maximumSize(16_384).build();

  private PairScoreCodec() {}

  /**
   * Decodes pair scores, cached by value: uuid to (other uuid to score), immutable.
   *
   * @throws DeviceAnnotationException when the value is not valid pair-score JSON
   */
  public static Map<String, Map<String, Integer>> decode(String value)
      throws DeviceAnnotationException {
    Object r = CACHE.asMap().computeIfAbsent(value, PairScoreCodec::decodeUncached);
    if (r instanceof DeviceAnnotationException e) {
      throw new DeviceAnnotationException(e.getMessage(), value, e);
    }
    @SuppressWarnings("unchecked")
    Map<String, Map<String, Integer>> m = (Map<String, Map<String, Integer>>) r;
    return m;
  }

  private static Object decodeUncached(String value) {
    try {
      List<JsonPair> list = READER.readValue(value);
      Map<String, Map<String, Integer>> out = new HashMap<>();
      if (list != null) {
        for (JsonPair p : list) {
          if (p == null || p.uuid == null) {
            return new DeviceAnnotationException("pair score entry without uuid", value);
          }
          out.put(p.uuid, p.score == null ? Map.of() : Map.copyOf(p.score));
        }
      }
      return Map.copyOf(out);
    } catch (JacksonException | NullPointerException e) {
      return new DeviceAnnotationException(
          "invalid pair score annotation: " + e.getMessage(), value);
    }
  }

  static final class JsonPair {
    public String uuid;
    public Map<String, Integer> score;
  }
}
