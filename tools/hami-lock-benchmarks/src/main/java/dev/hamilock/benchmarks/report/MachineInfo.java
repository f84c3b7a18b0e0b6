package dev.hamilock.benchmarks.report;

import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * Facts about the machine a run came from, for the report header.
 *
 * @param date run start, {@code yyyy-MM-dd HH:mm 'UTC'}
 * @param cores available processors
 * @param os OS name, version and architecture
 * @param jvm JVM name, vendor and version
 * @param maxHeapMiB maximum heap in MiB
 * @param loadAverage 1-minute load average at the start (negative if unavailable)
 */
public record MachineInfo(
    String date, int cores, String os, String jvm, long maxHeapMiB, double loadAverage) {

  /**
   * @return the facts of this JVM now
   */
  public static MachineInfo current() {
    Runtime rt = Runtime.getRuntime();
    return new MachineInfo(
        DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT)
            .format(Instant.now().atZone(ZoneOffset.UTC)),
        rt.availableProcessors(),
        System.getProperty("os.name")
            + " "
            + System.getProperty("os.version")
            + " "
            + System.getProperty("os.arch"),
        System.getProperty("java.vm.name")
            + " "
            + System.getProperty("java.vm.vendor")
            + " "
            + System.getProperty("java.runtime.version"),
        rt.maxMemory() / (1024 * 1024),
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  /**
   * @return one Markdown-friendly line
   */
  public String describe() {
    return String.format(
        Locale.ROOT,
        "%d cores, %s, %s, max heap %d MiB, load average %.2f at start",
        cores,
        os,
        jvm,
        maxHeapMiB,
        loadAverage);
  }
}
