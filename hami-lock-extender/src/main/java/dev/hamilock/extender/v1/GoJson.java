package dev.hamilock.extender.v1;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.util.Optional;

/** {@link ExtenderJson}'s Jackson mapper and the Go struct shapes it writes. */
final class GoJson {
  static final JsonMapper MAPPER =
      JsonMapper.builder(new JsonFactory().setCharacterEscapes(new GoEscapes()))
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .build();

  private GoJson() {}

  /** An object of the given keys and values, in order; an empty {@link Optional} is null. */
  static ObjectNode struct(Object... keysAndValues) {
    ObjectNode o = MAPPER.createObjectNode();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      o.set((String) keysAndValues[i], tree(keysAndValues[i + 1]));
    }
    return o;
  }

  private static JsonNode tree(Object v) {
    if (v instanceof Optional<?> o) {
      return o.isEmpty() ? NullNode.getInstance() : tree(o.get());
    }
    return v instanceof JsonNode n ? n : MAPPER.valueToTree(v);
  }

  static String write(JsonNode n) {
    try {
      return MAPPER.writeValueAsString(n);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException("writing JSON to a string cannot fail", e);
    }
  }

  /**
   * Go's default escaping: {@code < > &}, U+2028, U+2029 and control characters other than {@code
   * \b \f \n \r \t} as <code>&#92;u00xx</code> with lower-case hex, like {@code encoding/json}.
   */
  private static final class GoEscapes extends CharacterEscapes {
    private static final long serialVersionUID = 1L;
    private final int[] ascii;

    GoEscapes() {
      ascii = standardAsciiEscapesForJSON();
      for (int c = 0; c < 0x20; c++) {
        if (c != '\b' && c != '\f' && c != '\n' && c != '\r' && c != '\t') {
          ascii[c] = ESCAPE_CUSTOM;
        }
      }
      ascii['<'] = ESCAPE_CUSTOM;
      ascii['>'] = ESCAPE_CUSTOM;
      ascii['&'] = ESCAPE_CUSTOM;
    }

    @Override
    public int[] getEscapeCodesForAscii() {
      return ascii;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      boolean custom = ch < 0x80 ? ascii[ch] == ESCAPE_CUSTOM : ch == 0x2028 || ch == 0x2029;
      return custom ? new SerializedString(String.format("\\u%04x", ch)) : null;
    }
  }
}
