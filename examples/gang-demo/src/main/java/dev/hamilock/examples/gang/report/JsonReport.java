package dev.hamilock.examples.gang.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.hamilock.core.GoDuration;
import dev.hamilock.examples.gang.DemoOptions;
import dev.hamilock.examples.gang.DemoResult;
import dev.hamilock.examples.gang.run.LockTimeline;
import dev.hamilock.examples.gang.run.MemberResult;
import dev.hamilock.examples.gang.run.ModeResult;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code --json} report: one JSON object. Shape: {@code exitCode}, {@code summary}, {@code
 * options}, {@code warnings[]}, {@code errors[]}, {@code plan[]}, and {@code runs[]}, each with
 * {@code mode} ({@code gang}/{@code fail-fast}), {@code backend}, {@code replicas}, {@code
 * timeOrigin} (what every time of the run counts from: {@code "Permit release"}, or {@code "first
 * Filter"} when no pod is a gang member, or {@code "run start"} when no pod reached the Filter),
 * {@code timeToBoundMs} and {@code timeToAllocatedMs} (null if never), {@code allBound}, {@code
 * requestsByVerb} ({@code "verb resource"} to count), {@code totalRequests}, {@code violations[]},
 * {@code locksLeft[]}, {@code pods[]} (pod, gangMember, replica, node, gpuUuids, memoryMiB, cores,
 * lockWaitMs, lockAttempts, binds, result, reason, boundMs, allocatedMs) and {@code lockHolds[]}
 * (node, key, pod, acquiredMs, releasedMs, acquiredBy, releasedBy). Every time is in ms (rounded to
 * the microsecond) since the run's {@code timeOrigin}, so a pod's {@code boundMs} is at most {@code
 * timeToBoundMs} and a hold released by a device plugin ends at most at {@code timeToAllocatedMs}.
 */
public final class JsonReport {
  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private JsonReport() {}

  /**
   * @param r the result
   * @param options the options used
   * @return the JSON text
   */
  public static String render(DemoResult r, DemoOptions options) {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("exitCode", r.exitCode());
    root.put("summary", r.summary());
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("manifests", options.manifests().stream().map(Object::toString).toList());
    o.put("replicas", options.replicas());
    o.put("allocateMs", options.allocateMs());
    o.put("retryTimeout", GoDuration.format(options.retryTimeout()));
    o.put("mode", options.mode().flag());
    o.put("backoffScale", options.backoffScale());
    root.put("options", o);
    root.put("warnings", r.warnings());
    root.put("errors", r.errors());
    root.put("plan", r.plan());
    root.put("runs", r.runs().stream().map(JsonReport::run).toList());
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Map<String, Object> run(ModeResult m) {
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("mode", m.mode().flag());
    o.put("backend", m.backend());
    o.put("replicas", m.replicas());
    o.put("timeOrigin", m.timeZero());
    o.put("timeToBoundMs", m.timeToBoundMs().map(JsonReport::us).orElse(null));
    o.put("timeToAllocatedMs", m.timeToAllocatedMs().map(JsonReport::us).orElse(null));
    o.put("allBound", m.allBound());
    o.put("requestsByVerb", m.requestsByVerb());
    o.put("totalRequests", m.totalRequests());
    o.put("violations", m.violations());
    o.put("locksLeft", m.locksLeft());
    o.put("contendedAttempts", m.contendedAttempts());
    o.put("pods", m.members().stream().map(JsonReport::member).toList());
    o.put("lockHolds", m.holds().stream().map(JsonReport::hold).toList());
    return o;
  }

  private static Map<String, Object> member(MemberResult p) {
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("pod", p.pod());
    o.put("gangMember", p.gangMember());
    o.put("replica", p.replica());
    o.put("node", p.node());
    o.put("gpuUuids", p.gpuUuids());
    o.put("memoryMiB", p.memoryMiB());
    o.put("cores", p.cores());
    o.put("lockWaitMs", us(p.lockWaitMs()));
    o.put("lockAttempts", p.lockAttempts());
    o.put("binds", p.binds());
    o.put("result", p.result());
    o.put("reason", p.reason());
    o.put("boundMs", p.boundMs().map(JsonReport::us).orElse(null));
    o.put("allocatedMs", p.allocatedMs().map(JsonReport::us).orElse(null));
    return o;
  }

  /**
   * Rounds to the microsecond, so that rebasing's floating-point noise (363.42541299999993) is not
   * printed; rounding is monotonic, so the relations between times (bound before fully bound) hold.
   */
  private static double us(double ms) {
    return Math.rint(ms * 1000) / 1000;
  }

  private static Map<String, Object> hold(LockTimeline.Hold h) {
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("node", h.node());
    o.put("key", h.key());
    o.put("pod", h.pod());
    o.put("acquiredMs", us(h.acquiredMs()));
    o.put("releasedMs", h.releasedMs().map(JsonReport::us).orElse(null));
    o.put("acquiredBy", h.acquiredBy());
    o.put("releasedBy", h.releasedBy());
    return o;
  }
}
