package dev.hamilock.preflight.checks;

import dev.hamilock.core.GoDuration;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.model.ExtenderFlags;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.SchedulerConfiguration;
import dev.hamilock.preflight.model.SchedulerExtender;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * PF03 {@code retry-timeout-vs-http-timeout}: HAMi's pod-group retry in Bind ({@code
 * --node-lock-retry-timeout}, default {@value #DEFAULT_RETRY_TEXT}; spec §1.11, {@code
 * cmd/scheduler/main.go}) must end before kube-scheduler gives up on the extender's bind call
 * ({@code extenders[*].httpTimeout}; the chart writes {@code 30s} in {@code
 * charts/hami/templates/scheduler/configmap.yaml}; kube-scheduler uses {@value
 * #KUBE_DEFAULT_HTTP_TIMEOUT_SECONDS} s when it is absent or zero). Otherwise kube-scheduler
 * abandons the bind while the extender still waits, and may then lock and bind anyway.
 *
 * <ul>
 *   <li>ERROR: retry timeout ≥ httpTimeout; an unparsable httpTimeout (kube-scheduler does not
 *       start) or an unparsable flag (HAMi's scheduler does not start)
 *   <li>WARNING: headroom (httpTimeout − retry timeout) under {@value #MIN_HEADROOM_SECONDS} s
 *   <li>INFO: retry timeout ≤ 0 (retry disabled) while gangs are present
 * </ul>
 *
 * Applies to extenders with a {@code bindVerb} (only they receive the bind); every retry-timeout
 * setting found (Deployment containers, Helm values) is compared with every such extender; when
 * none is found the default is assumed. Durations are Go duration text, parsed with {@link
 * GoDuration}.
 */
public final class RetryTimeoutCheck extends AbstractCheck {

  /** HAMi's default {@code --node-lock-retry-timeout}. */
  static final String DEFAULT_RETRY_TEXT = "28s";

  /** kube-scheduler's extender timeout when {@code httpTimeout} is absent or zero. */
  static final int KUBE_DEFAULT_HTTP_TIMEOUT_SECONDS = 5;

  /** Headroom under which a warning is given. */
  static final int MIN_HEADROOM_SECONDS = 2;

  /** Creates the check. */
  public RetryTimeoutCheck() {
    super(
        "PF03",
        "retry-timeout-vs-http-timeout",
        "--node-lock-retry-timeout must stay below the extender httpTimeout (warn under 2 s headroom).");
  }

  private record Setting(String text, Optional<Location> location) {}

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    List<Setting> settings = new ArrayList<>();
    for (ExtenderFlags f : model.extenderFlags()) {
      f.nodeLockRetryTimeout()
          .ifPresent(v -> settings.add(new Setting(v.text(), Optional.of(v.location()))));
      f.nodeLockTimeout()
          .ifPresent(
              v -> {
                if (parse(v.text()).isEmpty()) {
                  out.add(
                      finding(
                          Severity.ERROR,
                          v.location(),
                          "--node-lock-timeout value \""
                              + v.text()
                              + "\" is not a Go duration; HAMi's scheduler exits at start-up.",
                          "Write a Go duration such as 5m or 300s."));
                }
              });
    }
    if (settings.isEmpty()) {
      settings.add(new Setting(DEFAULT_RETRY_TEXT, Optional.empty()));
    }
    boolean gangs = Gangs.gangsPresent(model);
    List<Setting> valid = new ArrayList<>();
    for (Setting s : settings) {
      Optional<Duration> d = parse(s.text());
      if (d.isEmpty()) {
        out.add(
            finding(
                Severity.ERROR,
                s.location().orElseThrow(),
                "--node-lock-retry-timeout value \""
                    + s.text()
                    + "\" is not a Go duration; HAMi's scheduler exits at start-up.",
                "Write a Go duration below the extender httpTimeout, e.g. --node-lock-retry-timeout=28s."));
      } else if (d.get().isNegative() || d.get().isZero()) {
        if (gangs) {
          out.add(
              finding(
                  Severity.INFO,
                  s.location().orElseThrow(),
                  "--node-lock-retry-timeout is "
                      + s.text()
                      + ": pod-group members do not retry a contended node "
                      + "lock in Bind; a gang member that meets a locked node fails its bind and is rescheduled.",
                  "Leave it at the default 28s (or any value below the extender httpTimeout) to let gang members "
                      + "wait for the node lock."));
        }
      } else {
        valid.add(s);
      }
    }
    for (SchedulerConfiguration cfg : model.schedulerConfigurations()) {
      for (SchedulerExtender x : cfg.extenders()) {
        if (x.bindVerb().isEmpty()) {
          continue;
        }
        Duration http;
        String httpText;
        if (x.httpTimeout().isPresent()) {
          Optional<Duration> h = parse(x.httpTimeout().get());
          if (h.isEmpty()) {
            out.add(
                finding(
                    Severity.ERROR,
                    x.location("httpTimeout"),
                    "Extender httpTimeout \""
                        + x.httpTimeout().get()
                        + "\" is not a Go duration; kube-scheduler "
                        + "refuses the configuration.",
                    "Write a Go duration, e.g. httpTimeout: 30s (what HAMi's chart writes)."));
            continue;
          }
          http = h.get().isZero() ? Duration.ofSeconds(KUBE_DEFAULT_HTTP_TIMEOUT_SECONDS) : h.get();
          httpText =
              h.get().isZero()
                  ? x.httpTimeout().get()
                      + " (kube-scheduler then uses "
                      + KUBE_DEFAULT_HTTP_TIMEOUT_SECONDS
                      + "s)"
                  : x.httpTimeout().get();
        } else {
          http = Duration.ofSeconds(KUBE_DEFAULT_HTTP_TIMEOUT_SECONDS);
          httpText =
              "not set (kube-scheduler's default " + KUBE_DEFAULT_HTTP_TIMEOUT_SECONDS + "s)";
        }
        Location httpLocation = x.location(x.httpTimeout().isPresent() ? "httpTimeout" : "");
        for (Setting s : valid) {
          Duration retry = parse(s.text()).orElseThrow();
          String retryText =
              s.location().isPresent()
                  ? "--node-lock-retry-timeout=" + s.text()
                  : "--node-lock-retry-timeout (not set in the files, HAMi's default "
                      + DEFAULT_RETRY_TEXT
                      + ")";
          Location where =
              s.location().isPresent() && x.httpTimeout().isPresent()
                  ? s.location().get()
                  : httpLocation;
          if (retry.compareTo(http) >= 0) {
            out.add(
                finding(
                    Severity.ERROR,
                    where,
                    retryText
                        + " is not below the extender's httpTimeout "
                        + httpText
                        + ": kube-scheduler "
                        + "abandons the bind call while HAMi still waits for the node lock, and HAMi may then "
                        + "lock the node and bind anyway.",
                    "Keep the retry timeout at least "
                        + MIN_HEADROOM_SECONDS
                        + "s below httpTimeout: set "
                        + "httpTimeout: 30s on the extender (as HAMi's chart does) and leave "
                        + "--node-lock-retry-timeout at 28s, or lower the retry timeout."));
          } else if (http.minus(retry).compareTo(Duration.ofSeconds(MIN_HEADROOM_SECONDS)) < 0) {
            out.add(
                finding(
                    Severity.WARNING,
                    where,
                    retryText
                        + " leaves only "
                        + GoDuration.format(http.minus(retry))
                        + " before the extender's "
                        + "httpTimeout "
                        + httpText
                        + ": a bind that retries to the end can still be abandoned "
                        + "by kube-scheduler (the last attempt may start just before the deadline).",
                    "Leave at least "
                        + MIN_HEADROOM_SECONDS
                        + "s of headroom, e.g. httpTimeout: 30s with "
                        + "--node-lock-retry-timeout=28s."));
          }
        }
      }
    }
    return out;
  }

  private static Optional<Duration> parse(String text) {
    try {
      return Optional.of(GoDuration.parse(text));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
