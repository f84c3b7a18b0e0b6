package dev.hamilock.reference;

import java.util.ArrayList;
import java.util.List;

/**
 * HAMi's lenient pod-devices codec for one vendor's annotation value, e.g. {@code
 * hami.io/vgpu-devices-to-allocate} ({@code pkg/device/devices.go} {@code
 * DecodeContainerDevices}/{@code DecodePodDevices}/{@code EncodePodSingleDevice}, spec §4.4).
 *
 * <p>Decoding quirks reproduced: the value is split on {@code ;} keeping every piece (the trailing
 * {@code ;} yields an extra empty container, {@code ""} yields one empty container); each container
 * is split on {@code :}; segments without {@code ,} are skipped silently; fields beyond 4 are
 * ignored. Encoding writes each device as {@code uuid,type,mem,cores:} and each container followed
 * by {@code ;}, so every decode/encode round trip grows the text by one {@code ;} ({@code A:;} →
 * blank → {@code ;;}).
 */
public final class HamiPodDevices {

  private HamiPodDevices() {}

  /**
   * Decodes one vendor's pod-devices text into per-container device lists (init containers first,
   * then regular containers).
   *
   * @param text the annotation value
   * @return mutable per-container lists (never null)
   * @throws HamiException {@code pod annotation format error, missing fields, do not use nodeName
   *     in task spec} for a segment with fewer than 4 fields; {@code invalid memory field: ...} /
   *     {@code invalid core field: ...} for a non-int32 number
   */
  public static List<List<ContainerDevice>> decode(String text) throws HamiException {
    List<List<ContainerDevice>> pod = new ArrayList<>();
    for (String container : text.split(";", -1)) {
      pod.add(decodeContainer(container));
    }
    return pod;
  }

  /**
   * Decodes one container's devices.
   *
   * @param text e.g. {@code GPU-0,NVIDIA,1000,30:GPU-1,NVIDIA,1000,30:}
   * @return mutable device list, empty for {@code ""}
   * @throws HamiException as {@link #decode(String)}
   */
  public static List<ContainerDevice> decodeContainer(String text) throws HamiException {
    List<ContainerDevice> devices = new ArrayList<>();
    if (text.isEmpty()) {
      return devices;
    }
    for (String segment : text.split(":", -1)) {
      if (!segment.contains(",")) {
        continue;
      }
      String[] fields = segment.split(",", -1);
      if (fields.length < 4) {
        throw new HamiException(
            "pod annotation format error, missing fields, do not use nodeName in task spec");
      }
      int mem = parseInt32(fields[2], "invalid memory field");
      int cores = parseInt32(fields[3], "invalid core field");
      devices.add(new ContainerDevice(fields[0], fields[1], mem, cores));
    }
    return devices;
  }

  /**
   * HAMi's {@code EncodePodSingleDevice}: every container's devices ({@code uuid,type,mem,cores:}
   * each) followed by {@code ;}.
   *
   * @param pod per-container device lists
   * @return the annotation text ({@code ""} for an empty list)
   */
  public static String encode(List<List<ContainerDevice>> pod) {
    StringBuilder out = new StringBuilder();
    for (List<ContainerDevice> container : pod) {
      for (ContainerDevice d : container) {
        out.append(d.uuid())
            .append(',')
            .append(d.type())
            .append(',')
            .append(d.usedMem())
            .append(',')
            .append(d.usedCores())
            .append(':');
      }
      out.append(';');
    }
    return out.toString();
  }

  /** Go's {@code strconv.ParseInt(s, 10, 32)} with HAMi's error prefix. */
  private static int parseInt32(String s, String prefix) throws HamiException {
    if (!s.matches("[+-]?[0-9]+")) {
      throw new HamiException(
          prefix + ": strconv.ParseInt: parsing " + GoFormats.jsonString(s) + ": invalid syntax");
    }
    try {
      return Integer.parseInt(s.startsWith("+") ? s.substring(1) : s);
    } catch (NumberFormatException outOfRange) {
      throw new HamiException(
          prefix
              + ": strconv.ParseInt: parsing "
              + GoFormats.jsonString(s)
              + ": value out of range");
    }
  }
}
