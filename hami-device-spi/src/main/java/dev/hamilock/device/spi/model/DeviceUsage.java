package dev.hamilock.device.spi.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One device's registration totals plus current usage (HAMi {@code DeviceUsage}); copy-on-write, so
 * a node's snapshot is shared by concurrent fits.
 *
 * @param count split count (slots)
 * @param used slots in use
 * @param totalmem MiB
 * @param usedmem MiB in use
 * @param totalcore compute capacity (100 = one card)
 * @param usedcores compute in use
 * @param exclusive whether an entry took all of the card's cores in one slot: HAMi's exclusive
 *     request ({@code gpucores} 100 of 100, {@code pkg/device/nvidia/device.go} Fit), which no
 *     other entry may share
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
    List<MigProfile> migProfiles,
    boolean exclusive) {

  public DeviceUsage {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(vendor, "vendor");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(mode, "mode");
    migProfiles = List.copyOf(migProfiles);
  }

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
        d.migProfiles(),
        false);
  }

  /**
   * Applies one allocated entry (HAMi {@code AddResourceUsage}, V70): used += max(slots, 1),
   * usedmem += usedmem, usedcores += usedcores; {@link #exclusive()} once an entry of one slot
   * takes 100 of a card's 100 cores. Sums saturate at {@link Integer#MAX_VALUE}.
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
        migProfiles,
        exclusive || (totalcore == 100 && d.usedcores() >= 100 && d.slots() <= 1));
  }

  /**
   * What this card holds beyond its capacity, one entry per exceeded limit (e.g. {@code slots
   * 11/10}, {@code memory 16000/15360 MiB}), and an {@link #exclusive()} entry sharing the card (as
   * HAMi's Fit refuses); empty within the limits.
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
    if (exclusive && used > 1) {
      over.add("exclusive (100 % cores) shared by " + used + " slots");
    }
    return over;
  }

  private static int sat(long v) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(Integer.MIN_VALUE, v));
  }
}
