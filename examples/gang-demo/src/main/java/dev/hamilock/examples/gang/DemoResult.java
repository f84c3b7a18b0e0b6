package dev.hamilock.examples.gang;

import dev.hamilock.examples.gang.run.ModeResult;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything one demo invocation produced, for the report and for tests.
 *
 * @param exitCode {@link GangDemo#EXIT_OK}, {@link GangDemo#EXIT_USER_ERROR} or {@link
 *     GangDemo#EXIT_INTERNAL_ERROR}
 * @param summary one line describing the input and the set-up ("" when the input could not be read)
 * @param warnings warnings about the input (not gang members, musl images, other preflight
 *     findings), in order
 * @param errors why the demo did not bind or did not succeed (bad file, no quorum, no fit, failed
 *     check)
 * @param gang the gang-mode run, if made
 * @param failFast the fail-fast run, if made
 * @param plan for {@code --kubeconfig}: what would be (or was) annotated and bound, one line each
 */
public record DemoResult(
    int exitCode,
    String summary,
    List<String> warnings,
    List<String> errors,
    Optional<ModeResult> gang,
    Optional<ModeResult> failFast,
    List<String> plan) {

  /** Validates and copies. */
  public DemoResult {
    Objects.requireNonNull(summary, "summary");
    warnings = List.copyOf(warnings);
    errors = List.copyOf(errors);
    Objects.requireNonNull(gang, "gang");
    Objects.requireNonNull(failFast, "failFast");
    plan = List.copyOf(plan);
  }

  /**
   * @return the runs made, gang first
   */
  public List<ModeResult> runs() {
    return java.util.stream.Stream.of(gang, failFast).flatMap(Optional::stream).toList();
  }
}
