package dev.hamilock.reference;

import static com.google.common.base.Preconditions.checkArgument;

import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.PatchUtils;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.DoubleSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faithful Java re-implementation of HAMi's node lock, {@code pkg/util/nodelock/nodelock.go} at
 * HAMi snapshot {@code 4707fb02} (spec §1.2–§1.10): {@code LockNode}, {@code SetNodeLock}, {@code
 * ReleaseNodeLock}, {@code CleanupNodeLock}, quirks included. One instance plays one HAMi process
 * (scheduler replica or device plugin): it owns the per-node in-process mutex map.
 *
 * <p>Wire behaviour: live GETs of the node (no informer), merge patches ({@code
 * application/merge-patch+json}) carrying {@code metadata.resourceVersion}: {@code
 * {"metadata":{"annotations":{"hami.io/mutex.lock":"<value>"},"resourceVersion":"<rv>"}}} to set
 * and {@code ...:null...} to release. An uncontended {@code lockNode} costs 4 requests (GET, GET,
 * GET, PATCH) and an owner release 3 (GET, GET, PATCH).
 *
 * <p>Errors: contention is {@link HamiLockContentionException} (possibly wrapped, test with {@link
 * HamiLockContentionException#isContention}); API failures are client-java {@link ApiException}s
 * (response-decoding failures are reported as {@code ApiException} with code 0); other HAMi errors
 * are {@link HamiException}s with Go's text. Interruption while waiting for the in-process mutex or
 * a backoff sleep is reported as a non-contention {@link HamiException} with the thread's interrupt
 * flag restored (Go cannot be interrupted here).
 *
 * <p>The caller's {@link ApiClient} should have a finite read timeout; this class adds none, as
 * HAMi's client-go calls use {@code context.Background()}.
 *
 * <p>Thread-safe.
 */
public final class HamiNodeLock {

  /** HAMi's package default {@code NodeLockTimeout}. */
  public static final Duration DEFAULT_LOCK_EXPIRY = Duration.ofMinutes(5);

  private static final Logger LOG = LoggerFactory.getLogger(HamiNodeLock.class);

  private final ApiClient apiClient;
  private final CoreV1Api coreApi;
  private final Duration lockExpiry;
  private final Clock clock;
  private final ZoneId timestampZone;
  private final GoBackoff backoff;
  private final Map<String, ReentrantLock> nodeMutexes = new ConcurrentHashMap<>();

  private HamiNodeLock(Builder b) {
    this.apiClient = b.apiClient;
    this.coreApi = new CoreV1Api(b.apiClient);
    this.lockExpiry = b.lockExpiry;
    this.clock = b.clock;
    this.timestampZone = b.timestampZone;
    this.backoff = new GoBackoff(b.sleeper, b.jitterSource);
  }

  /**
   * Starts a builder.
   *
   * @param apiClient the client every request goes through (one per simulated HAMi process is
   *     typical)
   * @return a builder with HAMi's defaults: expiry 5 min, system UTC clock, timestamps in {@code
   *     Z}, real sleeping, {@link ThreadLocalRandom} jitter
   * @throws NullPointerException if {@code apiClient} is {@code null}
   */
  public static Builder builder(ApiClient apiClient) {
    return new Builder(apiClient);
  }

  /**
   * @return the configured lock expiry ({@code NodeLockTimeout})
   */
  public Duration lockExpiry() {
    return lockExpiry;
  }

  /**
   * HAMi's {@code LockNode(node, pod)} (spec §1.5): GET node; no lock ⇒ {@link #setNodeLock}; parse
   * the value (parse error returned, never contention); expired (now − lock time strictly greater
   * than the expiry) ⇒ forced takeover; same namespace and name ⇒ success without any write
   * (re-entrant, timestamp not refreshed); owner-form value of another pod whose GET answers
   * NotFound ⇒ forced takeover; otherwise contention. Forced takeover = {@code
   * releaseNodeLock(skipOwnerCheck=true)} then {@link #setNodeLock}.
   *
   * @param node node name
   * @param podNamespace requesting pod's namespace
   * @param podName requesting pod's name
   * @throws HamiLockContentionException {@code node <node> has been locked within <expiry>: node
   *     lock contention} (or contention from {@link #setNodeLock}, possibly wrapped)
   * @throws HamiException malformed value, failed set/release retries, interruption
   * @throws ApiException node GET failed (NotFound included) or owner GET failed other than
   *     NotFound
   */
  public void lockNode(String node, String podNamespace, String podName)
      throws ApiException, HamiException {
    requireArg(node, "node");
    requireArg(podNamespace, "podNamespace");
    requireArg(podName, "podName");
    V1Node current = getNode(node);
    String value = lockAnnotation(current);
    if (value == null) {
      setNodeLock(node, podNamespace, podName);
      return;
    }
    HamiLockValue lock = HamiLockValue.parse(value);
    boolean takeOver = false;
    if (Duration.between(lock.lockTime(), clock.instant()).compareTo(lockExpiry) > 0) {
      LOG.debug("Node lock expired: node={} value={} timeout={}", node, value, lockExpiry);
      takeOver = true;
    } else if (lock.namespace().equals(podNamespace) && lock.name().equals(podName)) {
      LOG.debug(
          "Node lock already held by this pod: node={} pod={}/{}", node, podNamespace, podName);
      return;
    } else if (!lock.namespace().isEmpty() && !lock.name().isEmpty()) {
      try {
        call(() -> coreApi.readNamespacedPod(lock.name(), lock.namespace()).execute());
      } catch (ApiException e) {
        if (e.getCode() != 404) {
          throw e;
        }
        LOG.debug("Owner pod of node lock not found, taking over: node={} value={}", node, value);
        takeOver = true;
      }
    }
    if (takeOver) {
      releaseNodeLock(node, podNamespace, podName, true);
      setNodeLock(node, podNamespace, podName);
      return;
    }
    LOG.debug(
        "Node lock contention: node={} value={} requester={}/{}",
        node,
        value,
        podNamespace,
        podName);
    throw new HamiLockContentionException(
        "node " + node + " has been locked within " + GoFormats.duration(lockExpiry));
  }

  /**
   * HAMi's {@code SetNodeLock(node, pod)} (spec §1.5): under the node's in-process mutex, GET node;
   * any lock value present ⇒ contention; otherwise the inner retry loop (5 attempts, 100 ms ×2 with
   * jitter 0.5; every error except contention is retried) of GET, "value owned by this pod (any
   * timestamp) ⇒ success", "other value ⇒ contention", merge patch of a fresh owner-form value with
   * the read resourceVersion.
   *
   * @param node node name
   * @param podNamespace pod namespace
   * @param podName pod name
   * @throws HamiLockContentionException {@code node <node> is locked: node lock contention} at the
   *     first check
   * @throws HamiException {@code failed to set node lock (node=<node>, retry
   *     strategy={Duration:100ms Factor:2 Jitter:0.5 Steps:5 Cap:0s}): <cause>} when the loop ends
   *     in an error (a contention cause stays detectable), or interruption
   * @throws ApiException the first node GET failed
   */
  public void setNodeLock(String node, String podNamespace, String podName)
      throws ApiException, HamiException {
    requireArg(node, "node");
    requireArg(podNamespace, "podNamespace");
    requireArg(podName, "podName");
    ReentrantLock mutex = lockMutex(node);
    try {
      if (lockAnnotation(getNode(node)) != null) {
        throw new HamiLockContentionException("node " + node + " is locked");
      }
      Exception failure =
          retry(
              () -> {
                V1Node current = getNode(node);
                String value = lockAnnotation(current);
                if (value != null) {
                  if (HamiLockValue.isOwnedBy(value, podNamespace, podName)) {
                    return;
                  }
                  throw new HamiLockContentionException("node " + node + " is locked");
                }
                String newValue =
                    HamiLockValue.format(clock.instant(), timestampZone, podNamespace, podName);
                mergePatchNode(
                    node,
                    "{\"metadata\":{\"annotations\":{\""
                        + HamiLockValue.NODE_LOCK_KEY
                        + "\":"
                        + GoFormats.jsonString(newValue)
                        + "},\"resourceVersion\":"
                        + GoFormats.jsonString(resourceVersion(current))
                        + "}}");
              },
              e -> !HamiLockContentionException.isContention(e));
      if (failure != null) {
        throw new HamiException(
            "failed to set node lock (node="
                + node
                + ", retry strategy="
                + GoBackoff.GO_TEXT
                + "): "
                + GoFormats.errorText(failure),
            failure);
      }
      LOG.debug("Node lock set: node={} pod={}/{}", node, podNamespace, podName);
    } finally {
      mutex.unlock();
    }
  }

  /**
   * HAMi's {@code ReleaseNodeLock(node, pod, skipOwnerCheck)} (spec §1.6): under the node's
   * in-process mutex, GET node; no lock ⇒ success; owner mode and an owner-form value not owned by
   * the pod ⇒ success without writing (a legacy value passes this check for any pod); then the
   * retry loop (every error retried) of GET, "gone ⇒ success", compare (skip mode or comma-less
   * current value: changed since first read ⇒ success, keep theirs; owner mode with owner-form
   * current value: not owned ⇒ success), merge patch {@code null} with the read resourceVersion.
   * The timestamp is never parsed.
   *
   * @param node node name
   * @param podNamespace releasing pod's namespace; {@code null} plays Go's nil pod
   * @param podName releasing pod's name; {@code null} plays Go's nil pod
   * @param skipOwnerCheck {@code true} for the forced release of a takeover
   * @throws HamiException {@code cannot release node lock: pod is nil}, {@code failed to release
   *     node lock (node=<node>, retry strategy=...): <cause>}, or interruption
   * @throws ApiException the first node GET failed (NotFound included)
   */
  public void releaseNodeLock(
      String node, String podNamespace, String podName, boolean skipOwnerCheck)
      throws ApiException, HamiException {
    requireArg(node, "node");
    if (podNamespace == null || podName == null) {
      throw new HamiException("cannot release node lock: pod is nil");
    }
    ReentrantLock mutex = lockMutex(node);
    try {
      String observed = lockAnnotation(getNode(node));
      if (observed == null) {
        return;
      }
      if (!skipOwnerCheck
          && observed.contains(HamiLockValue.SEPARATOR)
          && !HamiLockValue.isOwnedBy(observed, podNamespace, podName)) {
        LOG.debug(
            "Node lock is not set by this pod: node={} value={} pod={}/{}",
            node,
            observed,
            podNamespace,
            podName);
        return;
      }
      Exception failure =
          retry(
              () -> {
                V1Node current = getNode(node);
                String value = lockAnnotation(current);
                if (value == null) {
                  return;
                }
                if (skipOwnerCheck || !value.contains(HamiLockValue.SEPARATOR)) {
                  if (!value.equals(observed)) {
                    return;
                  }
                } else if (!HamiLockValue.isOwnedBy(value, podNamespace, podName)) {
                  return;
                }
                mergePatchNode(
                    node,
                    "{\"metadata\":{\"annotations\":{\""
                        + HamiLockValue.NODE_LOCK_KEY
                        + "\":null},\"resourceVersion\":"
                        + GoFormats.jsonString(resourceVersion(current))
                        + "}}");
              },
              e -> true);
      if (failure != null) {
        throw new HamiException(
            "failed to release node lock (node="
                + node
                + ", retry strategy="
                + GoBackoff.GO_TEXT
                + "): "
                + GoFormats.errorText(failure),
            failure);
      }
      LOG.debug("Node lock released: node={} pod={}/{}", node, podNamespace, podName);
    } finally {
      mutex.unlock();
    }
  }

  /**
   * HAMi's {@code CleanupNodeLock(node)}: forgets the node's in-process mutex (called by the
   * scheduler's node-delete handler). A thread still holding or waiting on the old mutex is
   * unaffected; the next lookup creates a fresh one.
   *
   * @param node node name
   */
  public void cleanupNodeLock(String node) {
    requireArg(node, "node");
    nodeMutexes.remove(node);
  }

  /** The node's in-process mutex (created on first use); exposed to tests of §1.3. */
  ReentrantLock nodeMutex(String node) {
    return nodeMutexes.computeIfAbsent(node, n -> new ReentrantLock());
  }

  private ReentrantLock lockMutex(String node) throws HamiException {
    ReentrantLock mutex = nodeMutex(node);
    try {
      mutex.lockInterruptibly();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HamiException(
          "interrupted while waiting for the in-process lock of node " + node, e);
    }
    return mutex;
  }

  private Exception retry(GoBackoff.Attempt attempt, Predicate<Exception> retriable)
      throws HamiException {
    try {
      return backoff.onError(attempt, retriable);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HamiException("interrupted during node lock retry backoff", e);
    }
  }

  private V1Node getNode(String node) throws ApiException {
    return call(() -> coreApi.readNode(node).execute());
  }

  private void mergePatchNode(String node, String body) throws ApiException {
    call(
        () ->
            PatchUtils.patch(
                V1Node.class,
                () -> coreApi.patchNode(node, new V1Patch(body)).buildCall(null),
                V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
                apiClient));
  }

  static String lockAnnotation(V1Node node) {
    V1ObjectMeta meta = node == null ? null : node.getMetadata();
    Map<String, String> annotations = meta == null ? null : meta.getAnnotations();
    return annotations == null ? null : annotations.get(HamiLockValue.NODE_LOCK_KEY);
  }

  private static String resourceVersion(V1Node node) {
    V1ObjectMeta meta = node.getMetadata();
    String rv = meta == null ? null : meta.getResourceVersion();
    return rv == null ? "" : rv;
  }

  /** A client-java call; see {@link #call}. */
  @FunctionalInterface
  interface ApiCall<T> {
    T execute() throws ApiException;
  }

  /**
   * Runs a client-java call, reporting an unchecked response-decoding failure (client-java's strict
   * models throw {@link IllegalArgumentException} on unknown fields) as an {@link ApiException}
   * with code 0, as client-go would report a decode error.
   */
  static <T> T call(ApiCall<T> call) throws ApiException {
    try {
      return call.execute();
    } catch (RuntimeException e) {
      throw new ApiException("undecodable API response: " + e.getMessage(), e, 0, null, null);
    }
  }

  /** HAMi's Go checks compare with {@code ""}: empty is rejected, blank is not. */
  static void requireArg(String value, String name) {
    Objects.requireNonNull(value, name);
    checkArgument(!value.isEmpty(), "%s must be a non-empty string, got \"\"", name);
  }

  /** Validating builder for {@link HamiNodeLock}. */
  public static final class Builder {
    private final ApiClient apiClient;
    private Duration lockExpiry = DEFAULT_LOCK_EXPIRY;
    private Clock clock = Clock.systemUTC();
    private ZoneId timestampZone = ZoneOffset.UTC;
    private Sleeper sleeper = Sleeper.REAL;
    private DoubleSupplier jitterSource = () -> ThreadLocalRandom.current().nextDouble();

    private Builder(ApiClient apiClient) {
      this.apiClient = Objects.requireNonNull(apiClient, "apiClient");
    }

    /**
     * @param lockExpiry HAMi's {@code NodeLockTimeout} ({@code --node-lock-timeout}, default 5
     *     min); must be non-negative
     * @return this builder
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if negative
     */
    public Builder lockExpiry(Duration lockExpiry) {
      Objects.requireNonNull(lockExpiry, "lockExpiry");
      checkArgument(
          !lockExpiry.isNegative(),
          "lockExpiry must be a non-negative duration, got %s",
          lockExpiry);
      this.lockExpiry = lockExpiry;
      return this;
    }

    /**
     * @param clock wall clock for the timestamp written and the expiry check (Go {@code
     *     time.Now()})
     * @return this builder
     * @throws NullPointerException if null
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * @param zone the zone the RFC3339 timestamp is printed in (HAMi uses the process's local zone;
     *     default UTC, printed {@code Z})
     * @return this builder
     * @throws NullPointerException if null
     */
    public Builder timestampZone(ZoneId zone) {
      this.timestampZone = Objects.requireNonNull(zone, "timestampZone");
      return this;
    }

    /**
     * @param sleeper how the inner backoff sleeps (default {@link Sleeper#REAL})
     * @return this builder
     * @throws NullPointerException if null
     */
    public Builder sleeper(Sleeper sleeper) {
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /**
     * @param uniform source of U[0,1) for the backoff jitter (Go {@code rand.Float64()})
     * @return this builder
     * @throws NullPointerException if null
     */
    public Builder jitterSource(DoubleSupplier uniform) {
      this.jitterSource = Objects.requireNonNull(uniform, "jitterSource");
      return this;
    }

    /**
     * @return the configured lock
     */
    public HamiNodeLock build() {
      return new HamiNodeLock(this);
    }
  }

  @Override
  public String toString() {
    return "HamiNodeLock[lockExpiry="
        + GoFormats.duration(lockExpiry)
        + ", zone="
        + timestampZone
        + "]";
  }
}
