package dev.hamilock.core.annotation;

import static dev.hamilock.core.BackendFailure.Kind.NODE_NOT_FOUND;
import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import dev.hamilock.core.annotation.AnnotationTransport.NodeAnnotations;
import dev.hamilock.core.annotation.AnnotationWrite.Kind;
import dev.hamilock.core.annotation.AnnotationWrite.NotApplied;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.ReleaseFeeder;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LockStore} on a Kubernetes Node annotation over any client's {@link AnnotationTransport},
 * one JSON patch per write ({@link AnnotationPatches}; design decision 2, where HAMi's {@code
 * pkg/util/nodelock/nodelock.go} needs three GETs and a merge patch); {@link #read} is one GET
 * without {@code resourceVersion}, a quorum read.
 *
 * <p><b>Outcomes.</b> 2xx ⇒ written. A failed {@code test} (422) ⇒ not written, with a witness: for
 * a create, the watched view's other value, else one GET (a node without annotations map gets a
 * merge patch conditional on {@code resourceVersion}, whose lost races end as contention); for a
 * replace, one GET; a delete needs none. 404 ⇒ {@link LockBackendException.Kind#NODE_NOT_FOUND};
 * other refusals ⇒ {@link LockBackendException.Kind#REJECTED}.
 *
 * <p><b>Ambiguous outcomes</b> (no answer, 429, 5xx; design decision 4, HAMi PR #2197): a re-read
 * decides. Unapplied writes, 409 and 429 repeat with back-off from 20 ms to 1 s (±25 %, or the
 * {@code Retry-After} up to 5 s) up to {@code maxAttempts}, then {@link
 * LockBackendException.Kind#UNAVAILABLE}. Interruption ⇒ {@link
 * LockBackendException.Kind#INTERRUPTED}, flag restored. Thread-safe.
 */
public final class AnnotationLockStore implements LockStore {

  /** Default attempts per operation (writes and reads): 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  private static final Logger LOG = LoggerFactory.getLogger(AnnotationLockStore.class);
  private static final Duration MIN_BACKOFF = Duration.ofMillis(20);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(1);
  private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(5);

  private final AnnotationTransport transport;
  private final int maxAttempts;
  private final Optional<LockReleaseSignal> signal;
  private final String watchedKey;
  private final Function<String, Optional<String>> watchedValues;
  private final Function<String, Optional<String>> freeVersions;
  private final String name;
  private final WaitClock time;

  private AnnotationLockStore(Builder b) {
    this.transport = b.transport;
    this.maxAttempts = b.maxAttempts;
    this.signal = Optional.ofNullable(b.releaseSignal);
    this.watchedKey = b.watchedKey;
    this.watchedValues = b.watchedValues;
    this.freeVersions = b.freeVersions;
    this.name = b.name;
    this.time = b.time;
  }

  /**
   * A builder on the client's PATCH and GET: 5 attempts, no signal, no watched view.
   *
   * @throws NullPointerException if {@code transport} is null
   */
  public static Builder builder(AnnotationTransport transport) {
    return new Builder(Objects.requireNonNull(transport, "transport"));
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return signal;
  }

  @Override
  public Optional<String> read(String node, String key) throws LockBackendException {
    return readNode(node).value(key);
  }

  /** {@inheritDoc} Here: the node's annotations from one GET, as {@link #read}. */
  @Override
  public Optional<Map<String, String>> readAll(String node) throws LockBackendException {
    return Optional.of(Objects.requireNonNullElse(readNode(node).annotations(), Map.of()));
  }

  @Override
  public CasResult createIfAbsent(String node, String key, String value)
      throws LockBackendException {
    return write(new AnnotationWrite(Kind.CREATE, node, key, null, value));
  }

  /**
   * {@inheritDoc} Here: {@link AnnotationPatches#createAt}; 409/429 ⇒ not written after one pause;
   * an ambiguous answer is decided by one read.
   */
  @Override
  public CasResult createIfAbsentAt(String node, String key, String value, String version)
      throws LockBackendException {
    AnnotationWrite op = new AnnotationWrite(Kind.CREATE, node, key, null, value);
    if (Thread.currentThread().isInterrupted()) {
      throw interrupted(op.describe());
    }
    try {
      transport.patch(node, false, AnnotationPatches.createAt(key, value, version));
      return CasResult.written();
    } catch (Failure e) {
      if (e.isInterruption()) {
        throw interrupted(op.describe());
      } else if (e.status() == 404) {
        throw nodeNotFound(op, e);
      } else if (e.status() == 409 || e.status() == 429) {
        pause(1, e, op.describe()); // refused unapplied, as in write: its Retry-After first
      } else if (!e.isPatchNotApplicable()
          && readNode(node).value(key).filter(value::equals).isPresent()) {
        return CasResult.written();
      }
      LOG.debug("{} at resourceVersion {}: not written ({})", op.describe(), version, e.status());
      return CasResult.notWritten(Optional.empty());
    }
  }

  /** {@inheritDoc} Here: the {@link Builder#releases} feeder's; a failure is empty. */
  @Override
  public Optional<String> watchedFreeVersion(String node, String key) {
    return watched(freeVersions, node, key, "watched version view failed for node {}: {}");
  }

  @Override
  public CasResult replaceIfEquals(String node, String key, String expected, String value)
      throws LockBackendException {
    return write(new AnnotationWrite(Kind.REPLACE, node, key, expected, value));
  }

  @Override
  public boolean deleteIfEquals(String node, String key, String expected)
      throws LockBackendException {
    return write(new AnnotationWrite(Kind.DELETE, node, key, expected, null)).isWritten();
  }

  @Override
  public String toString() {
    return name;
  }

  private CasResult write(AnnotationWrite op) throws LockBackendException {
    for (int attempt = 1; ; attempt++) {
      if (Thread.currentThread().isInterrupted()) {
        throw interrupted(op.describe());
      }
      NotApplied n;
      try {
        try {
          transport.patch(op.node, false, op.body());
          return CasResult.written();
        } catch (Failure e) {
          return afterFailure(op, e); // the re-read that decides it, when needed
        }
      } catch (NotApplied e) {
        n = e;
      }
      if (attempt >= maxAttempts) {
        if (n.lostRace) {
          // lost the race to another writer: contention (the caller waits), not a failure
          LOG.debug("{}: lost the race to another writer: {}", op.describe(), n.getMessage());
          return CasResult.notWritten(readNode(op.node).value(op.key));
        }
        throw new LockBackendException(
            LockBackendException.Kind.UNAVAILABLE,
            n.getMessage() + " (outcome still not applied after retries)",
            n.failure.getCause(),
            n.failure.httpStatus());
      }
      pause(attempt, n.failure, op.describe());
    }
  }

  private CasResult afterFailure(AnnotationWrite op, Failure e)
      throws LockBackendException, NotApplied {
    if (e.isInterruption()) {
      throw interrupted(op.describe());
    }
    if (e.isPatchNotApplicable()) {
      if (op.kind == Kind.CREATE) {
        return afterFailedCreate(op);
      }
      if (op.kind == Kind.DELETE) {
        LOG.debug("{}: test failed (422)", op.describe());
        return CasResult.notWritten(Optional.empty()); // a release needs no witness
      }
      // never the watched view: the expected value may have come from it, and may be stale
      return notWritten(op, readNode(op.node).value(op.key));
    }
    if (e.status() == 404) {
      throw nodeNotFound(op, e);
    }
    if (e.status() == 409 || e.status() == 429) {
      throw new NotApplied(op.describe() + ": " + e.getMessage(), e, false);
    }
    if (e.isTransient()) {
      LOG.debug("{}: ambiguous outcome ({}); re-reading", op.describe(), e.getMessage());
      op.ambiguous = true;
      return op.decideFromStored(readNode(op.node).value(op.key), e);
    }
    throw e.toBackend(op.describe(), NODE_NOT_FOUND);
  }

  /** A create's patch failed: the witness from the watched view if it shows another value. */
  private CasResult afterFailedCreate(AnnotationWrite op) throws LockBackendException, NotApplied {
    if (!op.ambiguous) {
      Optional<String> seen = watchedValue(op.node, op.key);
      if (seen.isPresent() && !seen.get().equals(op.value)) {
        LOG.debug("{}: test failed (422), watched value \"{}\"", op.describe(), seen.get());
        return CasResult.notWritten(seen);
      }
    }
    NodeAnnotations node = readNode(op.node);
    if (node.annotations() == null) {
      return createWithMergePatch(op, node.resourceVersion());
    }
    Optional<String> current = node.value(op.key);
    if (op.ambiguous && current.isPresent() && current.get().equals(op.value)) {
      LOG.debug("{}: our own value is already stored (an earlier answer was lost)", op.describe());
      return CasResult.written();
    }
    return notWritten(op, current);
  }

  private static CasResult notWritten(AnnotationWrite op, Optional<String> current) {
    LOG.debug(
        "{}: test failed (422), value now {}",
        op.describe(),
        current.map(v -> "\"" + v + "\"").orElse("absent"));
    return CasResult.notWritten(current);
  }

  /** The node has no annotations map: JSON patch cannot add under it, a merge patch can. */
  private CasResult createWithMergePatch(AnnotationWrite op, String rv)
      throws LockBackendException, NotApplied {
    if (rv == null) {
      throw new LockBackendException(
          LockBackendException.Kind.REJECTED,
          op.describe()
              + ": node has no metadata.resourceVersion to make the merge patch conditional",
          null);
    }
    LOG.debug(
        "{}: node has no annotations map; merge patch at resourceVersion {}", op.describe(), rv);
    try {
      transport.patch(op.node, true, AnnotationPatches.mergeCreate(op.key, op.value, rv));
      return CasResult.written();
    } catch (Failure e) {
      if (e.status() == 409) {
        throw new NotApplied(op.describe() + ": node changed since resourceVersion " + rv, e, true);
      }
      if (e.status() == 422) {
        throw e.toBackend(op.describe() + " (merge patch)", NODE_NOT_FOUND);
      }
      return afterFailure(op, e);
    }
  }

  /** {@inheritDoc} Here: the {@link Builder#watchedLockValues} view; a failure is empty. */
  @Override
  public Optional<String> watchedValue(String node, String key) {
    String log = "watched lock value view failed for node {}: {}; reading the node";
    return watched(watchedValues, node, key, log);
  }

  private Optional<String> watched(
      Function<String, Optional<String>> view, String node, String key, String log) {
    if (view == null || !key.equals(watchedKey)) {
      return Optional.empty();
    }
    try {
      return Objects.requireNonNullElse(view.apply(node), Optional.empty());
    } catch (RuntimeException e) {
      LOG.debug(log, node, e.toString());
      return Optional.empty();
    }
  }

  /** One GET, repeating transient failures (not when interrupted) up to {@code maxAttempts}. */
  private NodeAnnotations readNode(String node) throws LockBackendException {
    String what = "GET node " + node;
    for (int attempt = 1; ; attempt++) {
      try {
        return transport.read(node);
      } catch (Failure e) {
        if (!e.isTransient()
            || e.isInterruption()
            || attempt >= maxAttempts
            || Thread.currentThread().isInterrupted()) {
          throw e.toBackend(what, NODE_NOT_FOUND);
        }
        pause(attempt, e, what);
      }
    }
  }

  /** Sleeps before attempt {@code attempt + 1}: the capped {@code Retry-After}, else back-off. */
  private void pause(int attempt, Failure last, String what) throws LockBackendException {
    long base = Math.min(MAX_BACKOFF.toNanos(), MIN_BACKOFF.toNanos() << Math.min(attempt - 1, 6));
    long nanos =
        last.retryAfter(MAX_RETRY_AFTER)
            .map(Duration::toNanos)
            .orElseGet(() -> base - base / 4 + time.randomBelow(base / 2 + 1)); // ±25 %
    try {
      time.sleepNanos(nanos);
    } catch (InterruptedException e) {
      throw interrupted(what);
    }
  }

  private static LockBackendException nodeNotFound(AnnotationWrite op, Failure e) {
    String what = op.describe() + ": node " + op.node + " not found";
    return new LockBackendException(LockBackendException.Kind.NODE_NOT_FOUND, what, e.getCause());
  }

  private static LockBackendException interrupted(String what) {
    Thread.currentThread().interrupt();
    return new LockBackendException(
        LockBackendException.Kind.INTERRUPTED, what + " was interrupted", null);
  }

  /** Builder for {@link AnnotationLockStore}; validates in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final AnnotationTransport transport;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private LockReleaseSignal releaseSignal;
    private String watchedKey;
    private Function<String, Optional<String>> watchedValues;
    private Function<String, Optional<String>> freeVersions;
    private String name = "AnnotationLockStore";
    private WaitClock time = WaitClock.SYSTEM;

    private Builder(AnnotationTransport transport) {
      this.transport = transport;
    }

    /** Attempts per write (repeats after certain non-application) and per read, 1..100 (5). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** The signal {@link #releaseSignal()} reports (a node watch's queue); {@code null}: none. */
    public Builder releaseSignal(LockReleaseSignal releaseSignal) {
      this.releaseSignal = releaseSignal;
      return this;
    }

    /**
     * A watched view of annotation {@code key} by node ({@link LockStore#watchedValue}), the
     * witness of a failed create instead of a GET. Default: none.
     */
    public Builder watchedLockValues(String key, Function<String, Optional<String>> valueByNode) {
      this.watchedKey = key;
      this.watchedValues = valueByNode;
      return this;
    }

    /** A feeder's queue and observed values of {@code key} as signal and view (empty: none). */
    public Builder releases(String key, Optional<ReleaseFeeder> feeder) {
      feeder.ifPresent(
          r -> {
            releaseSignal(r.releaseSignal(key))
                .watchedLockValues(key, node -> r.observedLockValue(node, key));
            freeVersions = node -> r.observedFreeVersion(node, key);
          });
      return this;
    }

    /** What {@link AnnotationLockStore#toString()} answers (the adapter's name). */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /** What the pauses between attempts sleep on and draw jitter from (default SYSTEM). */
    public Builder waitClock(WaitClock waitClock) {
      this.time = Objects.requireNonNull(waitClock, "waitClock");
      return this;
    }

    /**
     * @throws NullPointerException naming the setting: a watched view with a null key or function
     * @throws IllegalArgumentException naming the setting: maxAttempts outside 1..100, a watched
     *     view with a blank key
     */
    public AnnotationLockStore build() {
      checkArgument(
          maxAttempts >= 1 && maxAttempts <= 100, "maxAttempts must be 1..100: %s", maxAttempts);
      if (watchedKey != null || watchedValues != null) {
        requireNonBlank(watchedKey, "watchedLockValues key");
        Objects.requireNonNull(watchedValues, "watchedLockValues function");
      }
      return new AnnotationLockStore(this);
    }
  }
}
