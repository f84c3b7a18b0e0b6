package dev.hamilock.device.spi.codec;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.MigPlacement;
import dev.hamilock.device.spi.model.MigProfile;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Codec for node device registrations ({@code hami.io/node-nvidia-register} and the other vendors'
 * keys) in both HAMi formats ({@code pkg/device/devices.go}): <b>colon</b> (NVIDIA &le; v2.7,
 * decoded only) {@code id,count,devmem,devcore,type,numa,health[,index,mode]:} per device with
 * HAMi's checks and messages (V36), 7-field entries getting index 0 and mode {@code hami-core}; and
 * <b>JSON</b> (NVIDIA &ge; v2.8) decoded as Go's {@code encoding/json} (case-insensitive keys, no
 * coercion, index and numa int32) and encoded byte-exactly (zero values omitted; V38, V40). {@link
 * #decode} picks JSON for a first non-blank {@code [}, <code>&#123;</code> or {@code n}.
 * Thread-safe.
 */
public final class NodeRegistrationCodec {
  /** Mode given to 7-field (legacy) colon entries. */
  public static final String LEGACY_MODE = "hami-core";

  private static final ObjectReader READER = reader();

  private NodeRegistrationCodec() {}

  private static boolean json(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return c == '[' || c == '{' || value.startsWith("null", i);
      }
    }
    return false;
  }

  /**
   * Decodes either format into devices tagged with the vendor's CommonWord, in annotation order.
   *
   * @throws DeviceAnnotationException naming the bad segment or JSON error
   */
  public static List<DeviceInfo> decode(String value, String vendor)
      throws DeviceAnnotationException {
    return json(value) ? decodeJson(value, vendor) : decodeColon(value, vendor);
  }

  /**
   * Decodes the colon format exactly as HAMi's DecodeNodeDevices (V34-V36); empty for {@code :}.
   *
   * @throws DeviceAnnotationException with HAMi's message, e.g. {@code unexpected field count 5 in
   *     node annotation}
   */
  public static List<DeviceInfo> decodeColon(String value, String vendor)
      throws DeviceAnnotationException {
    Objects.requireNonNull(vendor, "vendor");
    if (value.indexOf(':') < 0) {
      throw new DeviceAnnotationException("node annotation missing device separator", value);
    }
    List<DeviceInfo> out = new ArrayList<>();
    for (String seg : value.split(":", -1)) {
      if (!seg.isEmpty()) {
        out.add(decodeColonDevice(seg, vendor));
      }
    }
    return out;
  }

  private static DeviceInfo decodeColonDevice(String seg, String vendor)
      throws DeviceAnnotationException {
    if (seg.indexOf(',') < 0) {
      throw new DeviceAnnotationException(
          "malformed node annotation segment: " + GoStrconv.quote(seg), seg);
    }
    String[] f = seg.split(",", -1);
    if (f.length != 7 && f.length != 9) {
      throw new DeviceAnnotationException(
          "unexpected field count " + f.length + " in node annotation", seg);
    }
    int count = field(seg, "count", "ParseInt", f[1]);
    int devmem = field(seg, "memory", "ParseInt", f[2]);
    int devcore = field(seg, "core", "ParseInt", f[3]);
    boolean health =
        PolicyValues.goBool(f[6])
            .orElseThrow(
                () ->
                    new DeviceAnnotationException(
                        "invalid health field: " + GoStrconv.syntax("ParseBool", f[6]).getMessage(),
                        seg));
    int numa = field(seg, "numa", "Atoi", f[5]);
    int index = 0;
    String mode = LEGACY_MODE;
    if (f.length == 9) {
      index = field(seg, "index", "Atoi", f[7]);
      if (index < 0) {
        throw new DeviceAnnotationException("index field must not be negative: " + index, seg);
      }
      mode = f[8];
    }
    return new DeviceInfo(
        f[0], index, count, devmem, devcore, f[4], numa, mode, List.of(), health, vendor);
  }

  private static int field(String seg, String name, String fn, String text)
      throws DeviceAnnotationException {
    try {
      return GoStrconv.parseInt32(fn, text);
    } catch (NumberFormatException e) {
      throw new DeviceAnnotationException("invalid " + name + " field: " + e.getMessage(), seg);
    }
  }

  /**
   * Decodes the JSON format like Go's {@code json.Unmarshal} into {@code []DeviceInfo}.
   *
   * @throws DeviceAnnotationException on syntax errors, wrong types, out-of-range numbers, trailing
   *     data or {@code null} entries
   */
  public static List<DeviceInfo> decodeJson(String value, String vendor)
      throws DeviceAnnotationException {
    Objects.requireNonNull(vendor, "vendor");
    JsonDevice[] arr;
    try {
      arr = READER.readValue(value);
    } catch (JacksonException e) {
      throw new DeviceAnnotationException(
          "invalid JSON node registration: " + e.getOriginalMessage(), value, e);
    }
    if (arr == null) {
      return List.of();
    }
    List<DeviceInfo> out = new ArrayList<>(arr.length);
    for (int i = 0; i < arr.length; i++) {
      JsonDevice j = arr[i];
      if (j == null) {
        throw new DeviceAnnotationException("null device entry at position " + i, value);
      }
      if (j.index < 0 || j.index > Integer.MAX_VALUE) {
        throw new DeviceAnnotationException(
            "index out of range for device " + j.id + ": " + j.index, value);
      }
      List<MigProfile> profiles = new ArrayList<>();
      if (j.migProfiles != null) {
        for (JsonMig m : j.migProfiles) {
          if (m == null) {
            throw new DeviceAnnotationException("null migProfiles entry for device " + j.id, value);
          }
          List<MigPlacement> pl = new ArrayList<>();
          if (m.placements != null) {
            for (JsonPlacement p : m.placements) {
              if (p == null) {
                throw new DeviceAnnotationException("null placement for device " + j.id, value);
              }
              pl.add(new MigPlacement(p.start, p.size));
            }
          }
          profiles.add(
              new MigProfile(nz(m.name), m.memoryMB, m.core, m.sliceCount, m.instanceCount, pl));
        }
      }
      out.add(
          new DeviceInfo(
              nz(j.id),
              (int) j.index,
              j.count,
              j.devmem,
              j.devcore,
              nz(j.type),
              j.numa,
              nz(j.mode),
              profiles,
              j.health,
              vendor));
    }
    return out;
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  /**
   * Encodes the JSON format byte-exactly as Go's {@code json.Marshal([]DeviceInfo)} (V38):
   * zero/empty/false fields omitted; empty list gives {@code []}.
   */
  public static String encodeJson(List<DeviceInfo> devices) {
    StringBuilder b = new StringBuilder(devices.size() * 160 + 2);
    appendArray(
        b,
        devices,
        d -> {
          b.append('{');
          Sep s = new Sep(b);
          s.stringField("id", d.id());
          s.intField("index", d.index());
          s.intField("count", d.count());
          s.intField("devmem", d.devmem());
          s.intField("devcore", d.devcore());
          s.stringField("type", d.type());
          s.intField("numa", d.numa());
          s.stringField("mode", d.mode());
          if (!d.migProfiles().isEmpty()) {
            s.key("migProfiles");
            appendArray(b, d.migProfiles(), p -> appendMigProfile(b, p));
          }
          if (d.health()) {
            s.key("health");
            b.append("true");
          }
          b.append('}');
        });
    return b.toString();
  }

  /** One MIG profile as Go encodes it (no omitempty; V40). */
  private static void appendMigProfile(StringBuilder b, MigProfile p) {
    b.append("{\"name\":");
    GoJson.appendString(b, p.name());
    b.append(",\"memoryMB\":")
        .append(p.memoryMb())
        .append(",\"core\":")
        .append(p.core())
        .append(",\"sliceCount\":")
        .append(p.sliceCount())
        .append(",\"placements\":");
    appendArray(
        b,
        p.placements(),
        pl ->
            b.append("{\"start\":")
                .append(pl.start())
                .append(",\"size\":")
                .append(pl.size())
                .append('}'));
    b.append('}');
  }

  private static <T> void appendArray(StringBuilder b, List<T> items, Consumer<T> element) {
    b.append('[');
    for (int i = 0; i < items.size(); i++) {
      b.append(i == 0 ? "" : ",");
      element.accept(items.get(i));
    }
    b.append(']');
  }

  private static final class Sep {
    private final StringBuilder b;
    private boolean first = true;

    Sep(StringBuilder b) {
      this.b = b;
    }

    void key(String k) {
      b.append(first ? "\"" : ",\"").append(k).append("\":");
      first = false;
    }

    void stringField(String k, String v) {
      if (!v.isEmpty()) {
        key(k);
        GoJson.appendString(b, v);
      }
    }

    void intField(String k, long v) {
      if (v != 0) {
        key(k);
        b.append(v);
      }
    }
  }

  static ObjectReader reader() {
    JsonMapper mapper =
        JsonMapper.builder()
            .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    for (LogicalType t :
        List.of(LogicalType.Textual, LogicalType.Integer, LogicalType.Boolean, LogicalType.Float)) {
      mapper
          .coercionConfigFor(t)
          .setCoercion(
              CoercionInputShape.Integer, tryIf(t == LogicalType.Integer || t == LogicalType.Float))
          .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
          .setCoercion(CoercionInputShape.Boolean, tryIf(t == LogicalType.Boolean))
          .setCoercion(CoercionInputShape.String, tryIf(t == LogicalType.Textual))
          .setCoercion(CoercionInputShape.EmptyString, tryIf(t == LogicalType.Textual));
    }
    return mapper.readerFor(JsonDevice[].class);
  }

  /** Strings, booleans and numbers are read only into fields of their own type, as Go. */
  private static CoercionAction tryIf(boolean sameType) {
    return sameType ? CoercionAction.TryConvert : CoercionAction.Fail;
  }

  static final class JsonDevice {
    public String id;
    public long index;
    public int count;
    public int devmem;
    public int devcore;
    public String type;
    public int numa;
    public String mode;
    public List<JsonMig> migProfiles;
    public boolean health;
  }

  static final class JsonMig {
    public String name;
    public int memoryMB;
    public int core;
    public int sliceCount;
    public int instanceCount;
    public List<JsonPlacement> placements;
  }

  static final class JsonPlacement {
    public int start;
    public int size;
  }
}
