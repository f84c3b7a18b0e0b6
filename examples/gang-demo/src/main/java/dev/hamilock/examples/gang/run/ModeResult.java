package dev.hamilock.examples.gang.run;

import dev.hamilock.examples.gang.DemoOptions;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One run of the gang under one bind strategy.
 *
 * @param mode {@link DemoOptions.Mode#GANG} or {@link DemoOptions.Mode#FAIL_FAST}
 * @param backend where it ran
 * @param replicas scheduler replicas
 * @param members one entry per pod, in input order
 *     <p>Every time in it counts from one origin, {@code timeZero}: the members' {@code boundMs}
 *     and {@code allocatedMs}, the holds' {@code acquiredMs} and {@code releasedMs}, {@code
 *     timeToBoundMs} and {@code timeToAllocatedMs}, all in ms since time zero (negative only for a
 *     pod that is not a gang member and took its lock before another group's Permit released).
 * @param timeZero what time zero is: {@link #PERMIT_RELEASE}, or {@link #FIRST_FILTER} when no pod
 *     is a gang member, or {@link #RUN_START} when no pod reached the Filter
 * @param timeToBoundMs ms from time zero until the last pod was bound; empty if some never were
 * @param timeToAllocatedMs ms from time zero until the last device-plugin hand-off completed (lock
 *     released); empty if some never did (or no plugin is simulated)
 * @param requestsByVerb API requests from time zero's run by {@code "verb resource"}
 * @param violations the safety check's findings (empty = no overlapping slices, consistent pods)
 * @param locksLeft node locks still held after quiescence ({@code node: key=value})
 * @param holds who held which lock when
 * @param contendedAttempts contended lock attempts per node
 */
public record ModeResult(
    DemoOptions.Mode mode,
    String backend,
    int replicas,
    List<MemberResult> members,
    String timeZero,
    Optional<Double> timeToBoundMs,
    Optional<Double> timeToAllocatedMs,
    Map<String, Long> requestsByVerb,
    List<String> violations,
    List<String> locksLeft,
    List<LockTimeline.Hold> holds,
    Map<String, Integer> contendedAttempts) {

  /**
   * Time zero when a PodGroup reached quorum: the instant Coscheduling's Permit released its
   * members.
   */
  public static final String PERMIT_RELEASE = "Permit release";

  /** Time zero when no pod is a gang member: the start of the first scheduling cycle (Filter). */
  public static final String FIRST_FILTER = "first Filter";

  /** Time zero when no pod reached the Filter (e.g. none found): the start of the run. */
  public static final String RUN_START = "run start";

  /** Validates and copies. */
  public ModeResult {
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(backend, "backend");
    members = List.copyOf(members);
    Objects.requireNonNull(timeZero, "timeZero");
    Objects.requireNonNull(timeToBoundMs, "timeToBoundMs");
    Objects.requireNonNull(timeToAllocatedMs, "timeToAllocatedMs");
    requestsByVerb = Collections.unmodifiableMap(new TreeMap<>(requestsByVerb));
    violations = List.copyOf(violations);
    locksLeft = List.copyOf(locksLeft);
    holds = List.copyOf(holds);
    contendedAttempts = Map.copyOf(contendedAttempts);
  }

  /**
   * @return whether every pod was bound
   */
  public boolean allBound() {
    return members.stream().allMatch(MemberResult::bound);
  }

  /**
   * @return total API requests
   */
  public long totalRequests() {
    return requestsByVerb.values().stream().mapToLong(Long::longValue).sum();
  }

  /**
   * @return whether the run is safe and complete: all bound, no violation, no lock left
   */
  public boolean ok() {
    return allBound() && violations.isEmpty() && locksLeft.isEmpty();
  }
}
