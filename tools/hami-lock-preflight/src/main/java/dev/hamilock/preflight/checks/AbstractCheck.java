package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.PreflightCheck;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Location;

/** Id, name and description plumbing shared by the standard checks. */
abstract class AbstractCheck implements PreflightCheck {

  private final String id;
  private final String name;
  private final String description;

  AbstractCheck(String id, String name, String description) {
    this.id = id;
    this.name = name;
    this.description = description;
  }

  @Override
  public final String id() {
    return id;
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final String description() {
    return description;
  }

  final Finding finding(Severity severity, Location location, String message, String fix) {
    return new Finding(id, name, severity, location, message, fix);
  }

  @Override
  public String toString() {
    return id + " " + name;
  }
}
