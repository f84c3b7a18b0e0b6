package dev.hamilock.extender;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The HTTP side's meters on a Micrometer {@link MeterRegistry} (Prometheus names in brackets):
 *
 * <ul>
 *   <li>{@code hami.extender.requests} [{@code hami_extender_requests_seconds}]: timer of filter,
 *       bind and preempt requests, tags {@code verb} ({@code filter}, {@code bind}, {@code
 *       preempt}) and {@code outcome} ({@code ok}, {@code error} = answered with {@code Error},
 *       {@code rejected}, {@code deadline}, {@code failed} = internal failure);
 *   <li>{@code hami.extender.requests.in.flight} [{@code hami_extender_requests_in_flight}]: filter
 *       and bind requests being read or worked on;
 *   <li>{@code hami.extender.request.body.bytes.in.flight}: bytes reserved for bodies;
 *   <li>{@code hami.extender.requests.rejected} [{@code hami_extender_requests_rejected_total}]:
 *       tag {@code reason}: {@code header_timeout}, {@code body_timeout}, {@code body_too_large},
 *       {@code in_flight_bytes}, {@code busy}, {@code too_many_nodes}, {@code scheduler_name},
 *       {@code no_managed_resource}, {@code pod_not_found}, {@code invalid_request}, {@code
 *       bad_request}, {@code method_not_allowed}, {@code not_found}.
 * </ul>
 */
public final class ExtenderMetrics {
  private final MeterRegistry registry;
  private final AtomicLong inFlight = new AtomicLong();
  private final AtomicLong bodyBytes = new AtomicLong();

  public ExtenderMetrics(MeterRegistry registry) {
    this.registry = java.util.Objects.requireNonNull(registry, "registry");
    Gauge.builder("hami.extender.requests.in.flight", inFlight, AtomicLong::get)
        .description("filter and bind requests being read or worked on")
        .register(registry);
    Gauge.builder("hami.extender.request.body.bytes.in.flight", bodyBytes, AtomicLong::get)
        .description("bytes reserved for request bodies being read or worked on")
        .baseUnit("bytes")
        .register(registry);
  }

  /** Meters on a private in-memory registry (nothing exported). */
  public static ExtenderMetrics inMemory() {
    return new ExtenderMetrics(new SimpleMeterRegistry());
  }

  public MeterRegistry registry() {
    return registry;
  }

  void request(String verb, String outcome, Duration took) {
    Timer.builder("hami.extender.requests")
        .description("filter and bind requests by outcome")
        .tag("verb", verb)
        .tag("outcome", outcome)
        .publishPercentileHistogram(false)
        .register(registry)
        .record(took);
  }

  void rejected(String reason) {
    Counter.builder("hami.extender.requests.rejected")
        .description("requests refused, by reason")
        .tag("reason", reason)
        .register(registry)
        .increment();
  }

  /** The count of rejections for a reason so far. */
  public double rejectedCount(String reason) {
    Counter c = registry.find("hami.extender.requests.rejected").tag("reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  AtomicLong inFlight() {
    return inFlight;
  }

  AtomicLong bodyBytes() {
    return bodyBytes;
  }
}
