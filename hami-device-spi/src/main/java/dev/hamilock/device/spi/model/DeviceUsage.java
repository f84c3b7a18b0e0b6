package dev.hamilock.device.spi.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Immutable scheduling view of one device: registration totals plus current usage (HAMi {@code
 * DeviceUsage}). Copy-on-write: {@link #withAllocation} returns a new instance, so one node usage
 * snapshot can be shared by any number of concurrent fits without copying.
 *
 * @param id device UUID
 * @param index device index on the node
 * @param vendor vendor CommonWord
 * @param type model text
 * @param numa NUMA node id
 * @param mode operating mode ({@code hami-core}, {@code mig}, ...)
 * @param health whether healthy
 * @param count split count (slots)
 * @param used slots in use
 * @param totalmem MiB
 * @param usedmem MiB in use
 * @param totalcore compute capacity (100 = one card)
 * @param usedcores compute in use
 * @param migProfiles MIG profiles, immutable
 */
public record DeviceUsage(
    String id,
    int index,
    String vendor,
    String type,
    int numa,
    String mode,
    boolean health,
    int count,
    int used,
    int totalmem,
    int usedmem,
    int totalcore,
    int usedcores,
    List<MigProfile> migProfiles) {

  public DeviceUsage {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(vendor, "vendor");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(mode, "mode");
    migProfiles = List.copyOf(migProfiles);
  }

  /**
   * A device with no usage.
   *
   * @param d registration entry
   * @return usage row with used, usedmem, usedcores = 0
   */
  public static DeviceUsage idle(DeviceInfo d) {
    return new DeviceUsage(
        d.id(),
        d.index(),
        d.vendor(),
        d.type(),
        d.numa(),
        d.mode(),
        d.health(),
        d.count(),
        0,
        d.devmem(),
        0,
        d.devcore(),
        0,
        d.migProfiles());
  }

  /**
   * Applies one allocated entry (HAMi {@code AddResourceUsage}, V70): used += max(slots, 1),
   * usedmem += usedmem, usedcores += usedcores. Sums saturate at {@link Integer#MAX_VALUE}.
   *
   * @param d the entry placed on this device
   * @return the new usage
   */
  public DeviceUsage withAllocation(ContainerDevice d) {
    return new DeviceUsage(
        id,
        index,
        vendor,
        type,
        numa,
        mode,
        health,
        count,
        sat(used + (long) Math.max(d.slots(), 1)),
        totalmem,
        sat(usedmem + (long) d.usedmem()),
        totalcore,
        sat(usedcores + (long) d.usedcores()),
        migProfiles);
  }

  /**
   * What this card holds beyond its capacity: the over-commit rule of {@code hami-lock-doctor
   * audit} (finding AU01), one entry per exceeded limit, e.g. {@code [slots 11/10, memory
   * 16000/15360 MiB, cores 130/100 %]}.
   *
   * @return the exceeded limits (slots, memory in MiB, cores in % of a card), empty within them
   */
  public List<String> overCommit() {
    List<String> over = new ArrayList<>();
    if (used > count) {
      over.add("slots " + used + "/" + count);
    }
    if (usedmem > totalmem) {
      over.add("memory " + usedmem + "/" + totalmem + " MiB");
    }
    if (usedcores > totalcore) {
      over.add("cores " + usedcores + "/" + totalcore + " %");
    }
    return over;
  }

  private static int sat(long v) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(Integer.MIN_VALUE, v));
  }
}
