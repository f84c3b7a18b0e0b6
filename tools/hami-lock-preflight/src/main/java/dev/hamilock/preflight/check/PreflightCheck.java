package dev.hamilock.preflight.check;

import dev.hamilock.preflight.model.ManifestModel;
import java.util.List;

/**
 * One preflight check. Implementations are stateless and thread-safe; embedders add their own
 * through {@code Preflight.Builder#add(PreflightCheck)}.
 *
 * <p>A check must not throw for any input shape: a value it cannot interpret is either a finding or
 * ignored. (If one throws anyway, {@code Preflight} reports that as an {@link Severity#ERROR}
 * finding of the check rather than failing the whole run.)
 */
public interface PreflightCheck {

  /**
   * @return short stable id, e.g. {@code PF01}; unique among the checks of one run
   */
  String id();

  /**
   * @return descriptive stable id, lower-case with dashes, e.g. {@code queue-sort-conflict}
   */
  String name();

  /**
   * @return one sentence saying what the check looks for
   */
  String description();

  /**
   * Runs the check.
   *
   * @param model everything the input files say
   * @return the findings, possibly empty; never {@code null}
   */
  List<Finding> run(ManifestModel model);
}
