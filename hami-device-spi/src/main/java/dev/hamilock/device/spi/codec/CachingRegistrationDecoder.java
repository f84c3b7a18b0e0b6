package dev.hamilock.device.spi.codec;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import dev.hamilock.device.spi.model.DeviceInfo;
import java.util.List;
import java.util.Objects;

/** {@link NodeRegistrationCodec#decode} cached per value, errors too (bounded). Thread-safe. */
public final class CachingRegistrationDecoder {
  /** Default bound: enough for 5,000 nodes with room for churn. */
  public static final long DEFAULT_MAX_ENTRIES = 20_000;

  private final String vendor;
  private final Cache<String, Object> cache;

  /** Tags decoded devices with the {@code vendor} CommonWord; caches up to {@code maxEntries}. */
  public CachingRegistrationDecoder(String vendor, long maxEntries) {
    this.vendor = Objects.requireNonNull(vendor, "vendor");
    checkArgument(maxEntries > 0, "maxEntries must be positive: %s", maxEntries);
    this.cache = CacheBuilder.newBuilder().maximumSize(maxEntries).build();
  }

  /**
   * Decodes a registration value (either format) into devices tagged with the vendor, immutable.
   *
   * @throws DeviceAnnotationException when the value is malformed (cached too)
   */
  public List<DeviceInfo> decode(String value) throws DeviceAnnotationException {
    Object r = cache.asMap().computeIfAbsent(value, this::decodeUncached);
    if (r instanceof DeviceAnnotationException e) {
      throw new DeviceAnnotationException(e.getMessage(), e.segment().orElse(null), e);
    }
    @SuppressWarnings("unchecked")
    List<DeviceInfo> devices = (List<DeviceInfo>) r;
    return devices;
  }

  private Object decodeUncached(String value) {
    try {
      return List.copyOf(NodeRegistrationCodec.decode(value, vendor));
    } catch (DeviceAnnotationException e) {
      return e;
    }
  }
}
