package dev.hamilock.doctor;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The result of one doctor command.
 *
 * @param command {@code locks}, {@code unlock}, {@code gang}, {@code diagnose}, {@code audit} or
 *     {@code preempt}
 * @param nodes nodes with their registration summary and locks ({@code locks}, {@code diagnose})
 * @param gang the group ({@code gang})
 * @param action what {@code unlock} did or would do, if it acted
 * @param findings problems found, each with its fix; ids shared with preflight where the check is
 *     the same
 * @param notes what could not be checked and why (e.g. a resource this API server does not serve)
 * @param unreadable what the doctor could not read (exit status 2)
 * @param preemption what {@code preempt} planned
 */
public record DoctorReport(
    String command,
    List<NodeEntry> nodes,
    Optional<GangEntry> gang,
    Optional<String> action,
    List<Finding> findings,
    List<String> notes,
    List<ClusterReadException> unreadable,
    Optional<PreemptEntry> preemption) {

  /** Exit status: no error finding. */
  public static final int EXIT_CLEAN = 0;

  /** Exit status: at least one error finding. */
  public static final int EXIT_ERRORS = 1;

  /** Exit status: the cluster could not be read (or bad usage). */
  public static final int EXIT_UNREADABLE = 2;

  /** Copies the lists. */
  public DoctorReport {
    Objects.requireNonNull(command, "command");
    nodes = List.copyOf(nodes);
    findings = List.copyOf(findings);
    notes = List.copyOf(notes);
    unreadable = List.copyOf(unreadable);
    Objects.requireNonNull(preemption, "preemption");
  }

  /**
   * A report of any command but {@code preempt}.
   *
   * @param command the command
   * @param nodes nodes
   * @param gang the group
   * @param action what was done
   * @param findings problems found
   * @param notes what could not be checked
   * @param unreadable what could not be read
   */
  public DoctorReport(
      String command,
      List<NodeEntry> nodes,
      Optional<GangEntry> gang,
      Optional<String> action,
      List<Finding> findings,
      List<String> notes,
      List<ClusterReadException> unreadable) {
    this(command, nodes, gang, action, findings, notes, unreadable, Optional.empty());
  }

  /**
   * @param severity a severity
   * @return how many findings have it
   */
  public long count(Severity severity) {
    return findings.stream().filter(f -> f.severity() == severity).count();
  }

  /**
   * @return 2 if something could not be read, else 1 if an ERROR finding, else 0
   */
  public int exitStatus() {
    if (!unreadable.isEmpty()) {
      return EXIT_UNREADABLE;
    }
    return count(Severity.ERROR) > 0 ? EXIT_ERRORS : EXIT_CLEAN;
  }

  /**
   * @param checkId a finding id, e.g. {@code PF05} or {@code DR01}
   * @return the findings with that id
   */
  public List<Finding> findings(String checkId) {
    return findings.stream().filter(f -> f.checkId().equals(checkId)).toList();
  }
}
