package dev.hamilock.preflight;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.PreflightCheck;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.checks.StandardChecks;
import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import dev.hamilock.preflight.model.ManifestModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entry point: runs preflight checks over manifests a user already has (the {@code hami-scheduler}
 * ConfigMap, the scheduler Deployment or Helm values, RBAC, PodGroups and workloads) and reports
 * the Coscheduling + HAMi pitfalls before anything is deployed. Instances are immutable and
 * thread-safe if their checks are.
 */
public final class Preflight {

  private static final Logger LOG = LoggerFactory.getLogger(Preflight.class);

  /** Set-up, check id, then source, document and path. */
  static final Comparator<Finding> ORDER =
      Comparator.comparing(Finding::setUp)
          .thenComparing(Finding::checkId)
          .thenComparing(f -> f.location().source())
          .thenComparingInt(f -> f.location().document())
          .thenComparing(f -> f.location().path());

  private final List<PreflightCheck> checks;

  private Preflight(List<PreflightCheck> checks) {
    this.checks = List.copyOf(checks);
  }

  /**
   * @return a preflight with the standard checks PF01…PF16 ({@link StandardChecks#all()})
   */
  public static Preflight standard() {
    return builder().addStandardChecks().build();
  }

  /**
   * @return an empty builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Loads the files and runs every check.
   *
   * @param files YAML/JSON files, each possibly multi-document
   * @return the report
   * @throws ManifestException if a file cannot be read or a document is not valid YAML/JSON (names
   *     the file and document)
   */
  public PreflightReport run(List<Path> files) throws ManifestException {
    Objects.requireNonNull(files, "files");
    List<ManifestDocument> docs = new ArrayList<>();
    for (Path f : files) {
      docs.addAll(ManifestLoader.load(Objects.requireNonNull(f, "files contains null")));
    }
    return check("", files.stream().map(Path::toString).distinct().toList(), docs);
  }

  /**
   * Runs every check over already-parsed documents.
   *
   * @param documents documents from {@link ManifestLoader}
   * @return the report; its sources are the documents' distinct sources
   * @throws ManifestException if an embedded KubeSchedulerConfiguration is not valid YAML
   */
  public PreflightReport check(List<ManifestDocument> documents) throws ManifestException {
    Objects.requireNonNull(documents, "documents");
    return check(
        "", documents.stream().map(ManifestDocument::source).distinct().toList(), documents);
  }

  /**
   * Runs every check over one set-up ({@link Finding#setUp()}); {@code sources} are the inputs read
   * (an empty file has no documents).
   */
  PreflightReport check(String setUp, List<String> sources, List<ManifestDocument> documents)
      throws ManifestException {
    ManifestModel model = ManifestModel.of(documents);
    List<Finding> findings = new ArrayList<>();
    for (PreflightCheck c : checks) {
      try {
        List<Finding> found = c.run(model);
        findings.addAll(Objects.requireNonNull(found, "check returned null"));
      } catch (RuntimeException e) {
        LOG.warn("preflight check {} ({}) failed", c.id(), c.name(), e);
        findings.add(
            new Finding(
                c.id(),
                c.name(),
                Severity.ERROR,
                Location.nowhere("(check " + c.id() + ")"),
                "The check itself failed: " + e,
                "Report this as a bug of check " + c.id() + "."));
      }
    }
    // identical findings (e.g. one flag compared with two equal configurations) are reported once
    return new PreflightReport(
        sources,
        documents.size(),
        findings.stream().map(f -> f.inSetUp(setUp)).distinct().sorted(ORDER).toList());
  }

  /** Collects the checks of a {@link Preflight}. */
  public static final class Builder {
    private final List<PreflightCheck> checks = new ArrayList<>();

    private Builder() {}

    /**
     * Adds PF01…PF16.
     *
     * @return this builder
     */
    public Builder addStandardChecks() {
      checks.addAll(StandardChecks.all());
      return this;
    }

    /**
     * Adds a check.
     *
     * @param check the check
     * @return this builder
     */
    public Builder add(PreflightCheck check) {
      checks.add(Objects.requireNonNull(check, "check"));
      return this;
    }

    /**
     * @return the preflight
     * @throws IllegalArgumentException if no check was added or two checks share an id
     */
    public Preflight build() {
      checkArgument(!checks.isEmpty(), "checks: add at least one check");
      Set<String> ids = new HashSet<>();
      for (PreflightCheck c : checks) {
        checkArgument(ids.add(c.id()), "checks: duplicate check id %s", c.id());
      }
      return new Preflight(checks);
    }
  }
}
