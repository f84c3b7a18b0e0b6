package dev.hamilock.device.spi.codec;

import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Codec for pod allocation annotations ({@code hami.io/vgpu-devices-allocated} etc.; HAMi {@code
 * pkg/device/devices.go} Encode/DecodePodDevices): {@code uuid,type,usedmem,usedcores:} per device,
 * {@code ;} after each container, exactly one segment per container (unlike HAMi's padding drift,
 * spec §7.25). Decoding refuses what HAMi skips silently (a segment without comma, HAMi#2756; fewer
 * than 4 fields; an empty UUID; memory or cores not a non-negative int32) and tolerates what HAMi
 * writes (no final {@code ;}, extra fields, the padding entry {@code ,,0,0}).
 */
public final class PodDevicesCodec {
  private PodDevicesCodec() {}

  /** Encodes one container's devices ({@code uuid,type,mem,cores:} each, no {@code ;}). */
  public static String encodeContainer(List<ContainerDevice> devices) {
    StringBuilder b = new StringBuilder();
    appendContainer(b, devices);
    return b.toString();
  }

  private static void appendContainer(StringBuilder b, List<ContainerDevice> devices) {
    devices.forEach(d -> b.append(entry(d)).append(':'));
  }

  private static String entry(ContainerDevice d) {
    return d.uuid() + "," + d.type() + "," + d.usedmem() + "," + d.usedcores();
  }

  /** Encodes a pod's devices for one vendor: one {@code ;}-terminated segment per container. */
  public static String encode(List<List<ContainerDevice>> containers) {
    StringBuilder b = new StringBuilder(containers.size() * 64);
    for (List<ContainerDevice> c : containers) {
      appendContainer(b, c);
      b.append(';');
    }
    return b.toString();
  }

  /**
   * Decodes a pod annotation value into one list per container, in annotation order ("" gives an
   * empty list; see the class doc for strictness).
   *
   * @throws DeviceAnnotationException naming the bad segment
   */
  public static List<List<ContainerDevice>> decode(String value) throws DeviceAnnotationException {
    List<List<ContainerDevice>> out = new ArrayList<>();
    String[] containers = value.split(";", -1);
    // the final ';' terminates the last container, it does not open an empty one
    int n = containers[containers.length - 1].isEmpty() ? containers.length - 1 : containers.length;
    for (int i = 0; i < n; i++) {
      out.add(decodeContainer(containers[i]));
    }
    return out;
  }

  /**
   * Decodes one container's text ({@code uuid,type,mem,cores:…}, without {@code ;}).
   *
   * @throws DeviceAnnotationException naming the bad segment
   */
  public static List<ContainerDevice> decodeContainer(String text)
      throws DeviceAnnotationException {
    if (text.isEmpty()) {
      return List.of();
    }
    List<ContainerDevice> out = new ArrayList<>(2);
    for (String seg : text.split(":", -1)) {
      if (!seg.isEmpty()) {
        decodeDevice(seg).ifPresent(out::add);
      }
    }
    return out;
  }

  private static Optional<ContainerDevice> decodeDevice(String seg)
      throws DeviceAnnotationException {
    String[] f = seg.split(",", -1);
    if (f.length < 4) {
      throw malformed(seg, f.length == 1 ? "no comma" : "expected uuid,type,usedmem,usedcores");
    }
    int mem = nonNegativeInt32(seg, "memory", f[2]);
    int cores = nonNegativeInt32(seg, "core", f[3]);
    if (f[0].isEmpty()) {
      if (f[1].isEmpty() && mem == 0 && cores == 0) {
        return Optional.empty(); // HAMi#991 padding entry ",,0,0": no device
      }
      throw malformed(seg, "empty device UUID");
    }
    return Optional.of(ContainerDevice.of(f[0], f[1], mem, cores));
  }

  private static DeviceAnnotationException malformed(String seg, String why) {
    return new DeviceAnnotationException(
        "malformed pod device segment " + GoStrconv.quote(seg) + ": " + why, seg);
  }

  private static int nonNegativeInt32(String seg, String what, String text)
      throws DeviceAnnotationException {
    String at = "invalid " + what + " field in pod device segment " + GoStrconv.quote(seg) + ": ";
    int v;
    try {
      v = GoStrconv.parseInt32("ParseInt", text);
    } catch (NumberFormatException e) {
      throw new DeviceAnnotationException(at + e.getMessage(), seg);
    }
    if (v < 0) {
      throw new DeviceAnnotationException(at + "must not be negative", seg);
    }
    return v;
  }
}
