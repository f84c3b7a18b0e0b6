package dev.hamilock.testkit;

import static dev.hamilock.testkit.Checks.checkArgument;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A per-request fault for {@link ApiServerEmulator#addFault(FaultRule)}: which requests it matches
 * (verb, resource, path regex, all optional) and what happens to them. Rules are checked in the
 * order they were added; the first matching rule with hits left applies. Immutable.
 */
public final class FaultRule {
  /** What a matching request suffers. */
  public enum Action {
    /** Answer with the given status code and body; the request is not executed. */
    RESPOND,
    /** Sleep, then handle the request normally. */
    DELAY,
    /** Execute the request, sleep, then send the normal response. */
    DELAY_AFTER_APPLY,
    /** Execute the request, then close the connection without any response. */
    DROP_RESPONSE_AFTER_APPLY,
    /** Execute the request, then answer the given status and body instead of its answer. */
    RESPOND_AFTER_APPLY,
    /** Close the connection without executing or answering. */
    CLOSE_CONNECTION,
    /** Call a hook; a hook that throws makes the emulator answer 500 InternalError. */
    INVOKE
  }

  private final Optional<String> verb;
  private final Optional<String> resource;
  private final Optional<Pattern> path;
  private final int times;
  private final Action action;
  private final int status;
  private final String body;
  private final Duration delay;
  private final Consumer<RequestInfo> hook;

  private FaultRule(
      Builder b,
      Action action,
      int status,
      String body,
      Duration delay,
      Consumer<RequestInfo> hook) {
    this.verb = b.verb;
    this.resource = b.resource;
    this.path = b.path;
    this.times = b.times;
    this.action = action;
    this.status = status;
    this.body = body;
    this.delay = delay;
    this.hook = hook;
  }

  /**
   * @return a builder matching every request until narrowed
   */
  public static Builder matching() {
    return new Builder();
  }

  public Action action() {
    return action;
  }

  /**
   * @return how many requests this rule affects; {@code -1} means unlimited
   */
  public int times() {
    return times;
  }

  /**
   * @return the status code for {@link Action#RESPOND} and {@link Action#RESPOND_AFTER_APPLY} (0
   *     otherwise)
   */
  public int status() {
    return status;
  }

  /**
   * @return the response body for {@link Action#RESPOND} and {@link Action#RESPOND_AFTER_APPLY}
   *     ({@code ""} otherwise)
   */
  public String body() {
    return body;
  }

  /**
   * @return the delay for {@link Action#DELAY} / {@link Action#DELAY_AFTER_APPLY}
   */
  public Duration delay() {
    return delay;
  }

  Consumer<RequestInfo> hook() {
    return hook;
  }

  /**
   * @return whether {@code request} is selected by this rule (ignoring the hit count)
   */
  public boolean matches(RequestInfo request) {
    return verb.map(v -> v.equals(request.verb())).orElse(true)
        && resource.map(r -> r.equals(request.resource())).orElse(true)
        && path.map(p -> p.matcher(request.path()).matches()).orElse(true);
  }

  @Override
  public String toString() {
    return "FaultRule[verb="
        + verb.orElse("*")
        + ", resource="
        + resource.orElse("*")
        + ", path="
        + path.map(Pattern::pattern).orElse("*")
        + ", times="
        + times
        + ", action="
        + action
        + "]";
  }

  /** Builds a {@link FaultRule}; the terminal methods choose the action. */
  public static final class Builder {
    private Optional<String> verb = Optional.empty();
    private Optional<String> resource = Optional.empty();
    private Optional<Pattern> path = Optional.empty();
    private int times = -1;

    private Builder() {}

    /**
     * @param verb Kubernetes verb to match, e.g. {@code patch}, {@code get}, {@code watch}
     */
    public Builder verb(String verb) {
      this.verb = Optional.of(Objects.requireNonNull(verb, "verb").toLowerCase(Locale.ROOT));
      return this;
    }

    /**
     * @param resource plural resource to match, e.g. {@code nodes} or {@code pods/binding}
     */
    public Builder resource(String resource) {
      this.resource = Optional.of(Objects.requireNonNull(resource, "resource"));
      return this;
    }

    /**
     * @param regex a regular expression the whole URL path must match, e.g. {@code
     *     /api/v1/nodes/node-a}
     * @throws java.util.regex.PatternSyntaxException if the regex is invalid
     */
    public Builder pathMatching(String regex) {
      this.path = Optional.of(Pattern.compile(Objects.requireNonNull(regex, "regex")));
      return this;
    }

    /**
     * @param times how many matching requests the rule affects before it expires; at least 1
     * @throws IllegalArgumentException if {@code times < 1}
     */
    public Builder times(int times) {
      checkArgument(times >= 1, "times must be at least 1: %s", times);
      this.times = times;
      return this;
    }

    /**
     * Answer with a raw status and body instead of executing the request.
     *
     * @param status HTTP status code, 100..599
     * @param body response body (sent as {@code application/json}); may be empty
     * @throws IllegalArgumentException if the status is out of range
     */
    public FaultRule respond(int status, String body) {
      checkArgument(status >= 100 && status <= 599, "status must be 100..599: %s", status);
      return new FaultRule(
          this, Action.RESPOND, status, Objects.requireNonNull(body, "body"), Duration.ZERO, null);
    }

    /**
     * Execute the request, then answer with a raw status and body instead of its answer: a write
     * applied whose answer says otherwise (a 500 from a proxy, an unreadable 2xx).
     *
     * @param status HTTP status code, 100..599
     * @param body response body (sent as {@code application/json}); may be empty
     * @throws IllegalArgumentException if the status is out of range
     */
    public FaultRule respondAfterApply(int status, String body) {
      checkArgument(status >= 100 && status <= 599, "status must be 100..599: %s", status);
      return new FaultRule(
          this,
          Action.RESPOND_AFTER_APPLY,
          status,
          Objects.requireNonNull(body, "body"),
          Duration.ZERO,
          null);
    }

    /**
     * Answer with a {@code v1.Status} failure body.
     *
     * @param status HTTP status code and Status {@code code}, 100..599
     * @param reason Status {@code reason}, e.g. {@code TooManyRequests}
     * @param message Status {@code message}
     */
    public FaultRule respondStatus(int status, String reason, String message) {
      ObjectNode s = JsonNodeFactory.instance.objectNode();
      s.put("kind", "Status").put("apiVersion", "v1");
      s.putObject("metadata");
      s.put("status", "Failure").put("message", message).put("reason", reason).put("code", status);
      return respond(status, s.toString());
    }

    /**
     * @param delay how long to sleep before handling the request normally; not negative
     */
    public FaultRule delay(Duration delay) {
      return new FaultRule(this, Action.DELAY, 0, "", checkDelay(delay), null);
    }

    /**
     * @param delay how long to hold the response after the request was executed; not negative
     */
    public FaultRule delayAfterApply(Duration delay) {
      return new FaultRule(this, Action.DELAY_AFTER_APPLY, 0, "", checkDelay(delay), null);
    }

    /**
     * Execute the request, then close the connection without answering: the client sees an I/O
     * error although the write happened (an ambiguous outcome). Note that OkHttp may silently retry
     * a request whose pooled connection was closed; give the rule enough {@code times} or expect
     * the retry to be handled normally.
     */
    public FaultRule dropResponseAfterApply() {
      return new FaultRule(this, Action.DROP_RESPONSE_AFTER_APPLY, 0, "", Duration.ZERO, null);
    }

    /**
     * @return a rule closing the connection without executing or answering the request
     */
    public FaultRule closeConnection() {
      return new FaultRule(this, Action.CLOSE_CONNECTION, 0, "", Duration.ZERO, null);
    }

    /**
     * @param hook called with the request before it is handled; if it throws, the emulator answers
     *     500 InternalError with the exception text
     */
    public FaultRule invoke(Consumer<RequestInfo> hook) {
      return new FaultRule(
          this, Action.INVOKE, 0, "", Duration.ZERO, Objects.requireNonNull(hook, "hook"));
    }

    private static Duration checkDelay(Duration d) {
      Objects.requireNonNull(d, "delay");
      checkArgument(!d.isNegative(), "delay must not be negative: %s", d);
      return d;
    }
  }
}
