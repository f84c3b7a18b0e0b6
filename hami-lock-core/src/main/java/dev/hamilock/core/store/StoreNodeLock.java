package dev.hamilock.core.store;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.GoDuration;
import dev.hamilock.core.InvalidGoDurationException;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.ObservedValueRelease;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HAMi's node-lock semantics over any {@link LockStore}, written once for every backend (HAMi
 * {@code pkg/util/nodelock/nodelock.go}: {@code LockNode}, {@code SetNodeLock}, {@code
 * ReleaseNodeLock}; improvements over HAMi are marked).
 *
 * <p><b>Acquire</b> (one attempt): {@code createIfAbsent} with a fresh value {@code <now UTC,
 * seconds>,<namespace>,<name>} — no read on the happy path. If a value is present, decide from the
 * value the store found (the {@link CasResult} witness; no separate read):
 *
 * <ol>
 *   <li>same owner ({@link LockOwner#isSameOwner}: namespace/name, and UID when this process wrote
 *       the value with a UID and the caller gives one) ⇒ {@link AcquireOutcome#REENTERED}.
 *       <em>Improvement:</em> the value is re-stamped with the current time by {@code
 *       replaceIfEquals}, so a long multi-vendor bind cannot expire its own lock (spec §7 item 9);
 *       HAMi's release still treats a re-stamped value as the owner's;
 *   <li>expired ⇒ take over with {@code replaceIfEquals(old, new)} ({@link
 *       AcquireOutcome#TOOK_OVER_EXPIRED}). <em>Clock-skew rule</em> (improvement over HAMi, which
 *       trusts the stamp alone): a value is expired only when <em>both</em>
 *       <ul>
 *         <li>this process first observed that exact value on that node (in its current appearance)
 *             more than one lock timeout ago, measured with this lock's clock, and
 *         <li>its timestamp is older than the lock timeout (HAMi's rule, strictly greater) — or
 *             this process first observed it more than <em>two</em> lock timeouts ago: a timestamp
 *             may keep a lock alive at most one timeout beyond first sight.
 *       </ul>
 *       Skew tolerance: a writer clock <em>behind</em> ours by any amount can no longer make a live
 *       lock look expired (it is held at least one timeout after this process first saw it); a
 *       writer clock <em>ahead</em> by {@code d} keeps its lock until its stamp is one timeout old
 *       ({@code timeout + d} after it was written), but never more than two timeouts after this
 *       process first saw it (so {@code 9999-12-31T23:59:59Z} blocks a node for two timeouts, not
 *       forever). A process that restarts (or evicts the memo, see below) counts afresh: for a lock
 *       whose stamp is already old it waits one timeout. Ages are saturating: no timestamp between
 *       years 0001 and 9999 makes {@code acquire} throw anything but the typed lock exceptions;
 *   <li><em>Holder still allocating</em> (HAMi#3096): an expired value whose owner the {@link
 *       OwnerLiveness#status} reports {@linkplain OwnerLiveness.HolderStatus#mayStillBeAllocated
 *       may still be allocated} — alive, bound to this node, not Running, bind-phase not {@code
 *       success}/{@code failed} — is <em>not</em> taken over: HAMi's device plugin finds the pod to
 *       serve from the lock value (spec §3.1), so a stalled {@code Allocate} for the old holder
 *       would hand it the new holder's allocation. The result is contention naming the stuck
 *       holder, logged once per value at WARN. It transfers as soon as the holder is gone (deleted,
 *       terminating, Succeeded, Failed), Running, bound elsewhere, or its bind-phase is {@code
 *       success}/{@code failed}. <em>What ends a holder stuck forever</em>: deliberately no second
 *       deadline. Marking the stuck pod's bind-phase {@code failed} and taking over would not be
 *       safe, because HAMi's plugin does not read the bind-phase of the pod it finds through the
 *       lock (only the no-lock fallback list filters on {@code allocating}/{@code success}).
 *       Kubernetes ends the usual cases itself: an Allocate error makes the kubelet fail the pod
 *       (UnexpectedAdmissionError ⇒ Failed), a lost node's pods are evicted (terminating);
 *       otherwise an operator deletes the pod the warning names (or, knowing the plugin will not
 *       serve it, sets its bind-phase to {@code failed}). Needs an {@link OwnerLiveness} that
 *       implements {@link OwnerLiveness#status} (the Kubernetes and in-memory ones do); with
 *       details unknown, expiry alone transfers;
 *   <li>owner form whose owner {@link OwnerLiveness} reports gone (NotFound, Succeeded, Failed,
 *       terminating) ⇒ take over ({@link AcquireOutcome#TOOK_OVER_DANGLING}); a liveness error is
 *       returned as {@link LockBackendException} naming the value, never read as "gone".
 *       <em>Difference from HAMi</em> (which asks on every attempt): an {@code ALIVE} answer is
 *       cached for {@link LockSettings#livenessCacheTtl() livenessCacheTtl} (default 1 s, measured
 *       with the lock's clock), keyed by the node and the <em>exact</em> lock value, and concurrent
 *       checks of the same value in this process share one call. So a queue of waiters contending
 *       for one holder costs one owner lookup per TTL instead of one per attempt. Trade-off: an
 *       owner that dies within the TTL is taken over at most one TTL later than without the cache
 *       (it still never waits past the lock timeout). The cache can only delay a takeover, never
 *       cause one: gone answers and errors are never cached, and a new value (re-stamp, new holder)
 *       is a new key. {@code 0} disables it (HAMi's behaviour). The lock record's own timestamp is
 *       deliberately <em>not</em> used to skip the check for young locks: it comes from another
 *       machine's clock, and a clock running ahead would hide a dangling lock for as long as the
 *       skew;
 *   <li>legacy timestamp-only and ownerless ({@code T,,}) values: never re-entrant, never dangling,
 *       expire normally;
 *   <li><em>Improvement:</em> malformed values (HAMi blocks the node forever) are treated as held
 *       by an unknown owner that expires one lock timeout after this process first observed that
 *       exact value on that node and key in its current appearance (once this process sees the node
 *       free or holding another value, the same text written again later is counted afresh). The
 *       first-seen memo is shared with the clock-skew rule. Memory is bounded (4096 nodes, least
 *       recently used evicted; an evicted or restarted process starts counting again, which only
 *       delays a takeover, never hastens it);
 *   <li>otherwise ⇒ {@link LockContentionException} naming node, key, value and age.
 * </ol>
 *
 * A compare-and-set that loses a race is re-evaluated from its witness (the value found instead;
 * absent ⇒ create again), at most 8 rounds per attempt; a value that keeps changing for longer is
 * reported as contention.
 *
 * <p><b>Waiters skip a compare-and-set bound to fail</b> (issue 25; HAMi polls with a GET and
 * PATCHes only a lock it saw free, {@code pkg/util/nodelock/nodelock.go}). For {@link
 * #acquireWaiting} only (a fail-fast {@link #acquire} always asks the store): when the store's
 * watched view ({@link LockStore#watchedValue}: a connected, current node watch) shows a value that
 * the store itself showed held at most {@link dev.hamilock.core.RetryPolicy#watchedPollInterval()}
 * (1 s) ago — the witness of a refused write, or this process's own write — the attempt is judged
 * from that value without a request: held ⇒ the same contention as a refused write; expired,
 * dangling or the owner's own ⇒ the compare-and-set as above. A view showing the node free, or no
 * view, or an older confirmation ⇒ the compare-and-set as without a watch. The view is only a hint
 * and the compare-and-set the authority: a watch that missed a release costs a waiter at most one
 * such interval, after which its attempt asks the store again.
 *
 * <p><b>Release</b>: compare-and-delete by exact value. The value this process last wrote for the
 * owner is tried first (one request); otherwise, or if that fails, the current value is read and
 * deleted only if its parsed namespace/name (and known UID) equal the owner's — a re-stamped value
 * of the same owner is released (as HAMi), anyone else's value, a legacy or a malformed one is left
 * in place and logged at DEBUG. <em>Difference from HAMi:</em> HAMi's release deletes legacy values
 * for any pod (spec §7 item 3); this library never removes a lock it cannot attribute to the
 * releasing owner.
 *
 * <p><b>Release with an observed value</b> ({@link #release(String, LockOwner, String)}, for
 * another process such as a device plugin that has just read the value to find its pod): one {@code
 * deleteIfEquals} with that exact value if it parses to the releasing owner; otherwise, or if it
 * changed meanwhile, the owner-checked path above.
 *
 * <p><b>Memory.</b> What the rules need to remember lives in small collaborators, each bounded to
 * 4096 entries (least recently used dropped, which can only delay a takeover): the liveness cache
 * (rule 4), the first sightings of each node's value (clock-skew rule, malformed values), the
 * values this process wrote and for whom (release, UID-precise re-entry, {@link #stillHeld}), and
 * the stuck holders already warned about. {@link LockJudgement} is the pure decision.
 *
 * <p>Thread-safe. Contention is logged at DEBUG, takeovers at INFO.
 */
public final class StoreNodeLock implements NodeLock, ObservedValueRelease {

  private static final Logger LOG = LoggerFactory.getLogger(StoreNodeLock.class);

  /** Compare-and-set rounds per call before giving up on a value that keeps changing. */
  static final int MAX_ROUNDS = 8;

  /** Capacity of each in-process memo (malformed first-seen times, written values). */
  static final int MEMO_CAPACITY = 4096;

  private final LockStore store;
  private final String key;
  private final Duration lockTimeout;
  private final InstantSource clock;
  private final NodeLockListener listener;

  // the lock's memory of what it saw and wrote, one small collaborator each
  /** Owner-liveness answers, {@code ALIVE} reused for the TTL (rule 4). */
  private final LivenessCache liveness;

  /** When each node's current value was first seen (clock-skew rule, malformed values). */
  private final FirstSightings sightings = new FirstSightings(MEMO_CAPACITY);

  /** The values this process wrote, and for whom (release, re-entry with UID, stillHeld). */
  private final WrittenValues written = new WrittenValues(MEMO_CAPACITY);

  /** Stuck holders already reported at WARN (HAMi#3096). */
  private final OnceWarnings stuckWarned = new OnceWarnings(MEMO_CAPACITY);

  /** When the store last showed each value held: a refused write's witness, or our own write. */
  private final BoundedMemo<NodeValue, Instant> shownHeld = new BoundedMemo<>(MEMO_CAPACITY);

  /** How long {@link #shownHeld} lets a watched value stand in for a compare-and-set. */
  private final Duration hintLifetime;

  private StoreNodeLock(LockStore store, LockSettings settings) {
    this.store = store;
    this.key = settings.key();
    this.lockTimeout = settings.lockTimeout();
    this.clock = settings.clock();
    this.listener = NodeLockListener.guarded(settings.listener());
    this.hintLifetime = settings.retryPolicy().watchedPollInterval();
    this.liveness =
        new LivenessCache(
            settings.ownerLiveness().orElse(OwnerLiveness.assumeAlive()),
            settings.livenessCacheTtl(),
            clock,
            MEMO_CAPACITY);
  }

  /**
   * @param store the backend
   * @param settings the lock settings, taken whole (an absent owner liveness means every owner is
   *     alive: no dangling takeover)
   * @return the lock
   * @throws NullPointerException if an argument is null
   */
  public static StoreNodeLock create(LockStore store, LockSettings settings) {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(settings, "settings");
    return new StoreNodeLock(store, settings);
  }

  /**
   * Resolves the lock timeout: explicit setting &gt; environment {@code HAMI_NODELOCK_EXPIRE} (Go
   * duration text; empty means unset, as in HAMi) &gt; 5 min. Unlike HAMi, which logs and ignores
   * an unparsable value, an invalid environment value is a configuration error.
   *
   * @param explicit the explicitly configured timeout, if any; positive
   * @param environment the process environment (e.g. {@code System.getenv()})
   * @return the timeout to use
   * @throws IllegalArgumentException naming the variable and value if the environment value is not
   *     a positive Go duration, or the explicit value is not positive
   */
  public static Duration resolveLockTimeout(
      Optional<Duration> explicit, Map<String, String> environment) {
    Objects.requireNonNull(explicit, "explicit");
    Objects.requireNonNull(environment, "environment");
    if (explicit.isPresent()) {
      Duration d = explicit.get();
      checkArgument(
          !d.isNegative() && !d.isZero(), "lockTimeout must be positive: %s", GoDuration.format(d));
      return d;
    }
    String text = environment.get(LOCK_TIMEOUT_ENV);
    if (text == null || text.isEmpty()) {
      return DEFAULT_LOCK_TIMEOUT;
    }
    Duration d;
    try {
      d = GoDuration.parse(text);
    } catch (InvalidGoDurationException e) {
      throw new IllegalArgumentException(
          "environment variable "
              + LOCK_TIMEOUT_ENV
              + "=\""
              + text
              + "\" is not a Go duration (e.g. 300s, 5m, 1h30m): "
              + e.getMessage(),
          e);
    }
    checkArgument(
        !d.isNegative() && !d.isZero(),
        "environment variable %s=\"%s\" must be a positive duration",
        LOCK_TIMEOUT_ENV,
        text);
    return d;
  }

  /**
   * @return the backend this lock runs on
   */
  public LockStore store() {
    return store;
  }

  @Override
  public String key() {
    return key;
  }

  @Override
  public Duration lockTimeout() {
    return lockTimeout;
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return store.releaseSignal();
  }

  @Override
  public AcquireOutcome acquire(String node, LockOwner owner)
      throws LockContentionException, LockBackendException {
    return attempt(node, owner, false);
  }

  /** Here, unlike {@link #acquire}, a watched view may answer contention (class description). */
  @Override
  public AcquireOutcome acquireWaiting(String node, LockOwner owner)
      throws LockContentionException, LockBackendException {
    return attempt(node, owner, true);
  }

  private AcquireOutcome attempt(String node, LockOwner owner, boolean waiting)
      throws LockContentionException, LockBackendException {
    requireNonBlank(node, "node");
    Objects.requireNonNull(owner, "owner");
    String lastValue = null;
    // what the last compare-and-set found instead; first, for a waiter, a current watch's value
    Optional<String> witness = waiting ? heldInView(node) : Optional.empty();
    if (witness.isEmpty() && store.releaseSignal().filter(s -> s.leavingTurn(node)).isPresent()) {
      throw contended(
          node,
          owner,
          "is left to other schedulers for a turn (this process queued on it for "
              + GoDuration.format(FairReleaseQueue.TURN)
              + ")",
          null);
    }
    for (int round = 0; round < MAX_ROUNDS; round++) {
      String fresh = LockRecordCodec.format(LockRecord.of(clock.instant(), owner));
      if (witness.isEmpty()) {
        CasResult created = store.createIfAbsent(node, key, fresh);
        if (created instanceof CasResult.NotWritten refused) {
          witness = refused.witness();
          witness.ifPresent(v -> shownHeld.put(new NodeValue(node, v), clock.instant()));
        } else {
          sightings.nodeFree(node); // the node was free: any earlier value is gone
          written.wrote(node, owner, fresh);
          shownHeld.put(new NodeValue(node, fresh), clock.instant());
          listener.acquired(node, key, owner, AcquireOutcome.ACQUIRED);
          return AcquireOutcome.ACQUIRED;
        }
        if (witness.isEmpty()) {
          continue; // released between the refusal and the store's look: create again
        }
      }
      String value = witness.get();
      lastValue = value;
      Verdict verdict = judgeChecked(node, value, owner);
      switch (verdict.kind) {
        case SAME_OWNER -> {
          CasResult restamped =
              value.equals(fresh)
                  ? CasResult.written()
                  : store.replaceIfEquals(node, key, value, fresh);
          if (restamped instanceof CasResult.NotWritten refused) {
            witness = refused.witness(); // changed meanwhile: decide again from what is there
          } else {
            forgetValue(node, value);
            written.wrote(node, owner, fresh);
            listener.acquired(node, key, owner, AcquireOutcome.REENTERED);
            return AcquireOutcome.REENTERED;
          }
        }
        case EXPIRED, DANGLING -> {
          AcquireOutcome outcome =
              verdict.kind == Kind.EXPIRED
                  ? AcquireOutcome.TOOK_OVER_EXPIRED
                  : AcquireOutcome.TOOK_OVER_DANGLING;
          CasResult takeover = store.replaceIfEquals(node, key, value, fresh);
          if (takeover instanceof CasResult.NotWritten refused) {
            witness = refused.witness(); // someone else was faster: decide again from the witness
          } else {
            return tookOver(node, owner, value, fresh, verdict.why, outcome);
          }
        }
        case HELD -> throw contended(node, owner, verdict.contention);
        default -> throw new IllegalStateException(verdict.kind.name());
      }
    }
    throw contended(
        node,
        owner,
        "kept changing during "
            + MAX_ROUNDS
            + " compare-and-set rounds (last value \""
            + lastValue
            + "\")",
        lastValue);
  }

  /**
   * The value a current watch shows on {@code node} ({@link LockStore#watchedValue}) if the store
   * showed that same value held at most {@link #hintLifetime} ago: an attempt then decides from it
   * without a request. Otherwise empty, and the attempt is a compare-and-set as without a watch, so
   * a view that missed a release holds a waiter back one hint lifetime at most.
   */
  private Optional<String> heldInView(String node) {
    Optional<String> seen = store.watchedValue(node, key);
    Instant at = seen.map(v -> shownHeld.get(new NodeValue(node, v))).orElse(null);
    if (at == null) {
      return Optional.empty();
    }
    Duration age = Ages.between(at, clock.instant());
    return age.isNegative() || age.compareTo(hintLifetime) > 0 ? Optional.empty() : seen;
  }

  /** {@code fresh} replaced the expired or dangling {@code value}: memos, log, listener. */
  private AcquireOutcome tookOver(
      String node,
      LockOwner owner,
      String value,
      String fresh,
      String why,
      AcquireOutcome outcome) {
    forgetValue(node, value);
    written.wrote(node, owner, fresh);
    LOG.info("node {}: {} took over lock {}=\"{}\" ({})", node, owner, key, value, why);
    listener.takenOver(node, key, owner, value, outcome);
    listener.acquired(node, key, owner, outcome);
    return outcome;
  }

  /** {@link #judge} now; a bug in judging a foreign value becomes a typed backend error. */
  private Verdict judgeChecked(String node, String value, LockOwner owner)
      throws LockBackendException {
    Instant now = clock.instant();
    try {
      return judge(node, value, owner, now);
    } catch (RuntimeException e) {
      // never let a bug in judging a foreign value escape acquire as an unchecked exception
      throw new LockBackendException(
          LockBackendException.Kind.REJECTED,
          "node " + node + ": cannot judge lock " + key + "=\"" + value + "\": " + e,
          e);
    }
  }

  /** Contention without a judged holder: {@code node N lock K <why>}, with the last value seen. */
  private LockContentionException contended(
      String node, LockOwner owner, String why, String lastValue) {
    return contended(
        node,
        owner,
        new LockContentionException(
            "node " + node + " lock " + key + " " + why,
            node,
            key,
            Optional.ofNullable(lastValue),
            Optional.empty(),
            Optional.empty(),
            null));
  }

  /** Reports {@code e} (debug log, listener) and returns it for the caller to throw. */
  private LockContentionException contended(
      String node, LockOwner owner, LockContentionException e) {
    LOG.debug("node {}: {} contended: {}", node, owner, e.getMessage());
    listener.contended(e);
    return e;
  }

  @Override
  public boolean release(String node, LockOwner owner) throws LockBackendException {
    requireNonBlank(node, "node");
    Objects.requireNonNull(owner, "owner");
    Optional<String> remembered = written.heldBy(node, owner);
    if (remembered.isPresent()
        && ownerOf(node, remembered.get()).filter(owner::isSameOwner).isPresent()
        && store.deleteIfEquals(node, key, remembered.get())) {
      released(node, owner, remembered.get());
      return true;
    }
    for (int round = 0; round < MAX_ROUNDS; round++) {
      Optional<String> current = store.read(node, key);
      if (current.isEmpty()) {
        LOG.debug("node {}: {} has no lock {} to release", node, owner, key);
        written.holdsNothing(node, owner);
        return false;
      }
      String value = current.get();
      Optional<LockOwner> holder = ownerOf(node, value);
      if (holder.filter(owner::isSameOwner).isEmpty()) {
        LOG.debug(
            "node {}: lock {}=\"{}\" is not held by {}; left in place", node, key, value, owner);
        return false;
      }
      if (store.deleteIfEquals(node, key, value)) {
        released(node, owner, value);
        return true;
      }
    }
    throw new LockBackendException(
        LockBackendException.Kind.CONFLICT,
        "node "
            + node
            + " lock "
            + key
            + " of "
            + owner
            + " kept changing during "
            + MAX_ROUNDS
            + " compare-and-delete rounds",
        null);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: if {@code observedValue} parses to {@code owner}, one {@code deleteIfEquals} with it
   * (one request, no read); if that precondition fails, or the value names someone else or is
   * legacy or malformed, {@link #release(String, LockOwner)} decides from what is stored.
   */
  @Override
  public boolean release(String node, LockOwner owner, String observedValue)
      throws LockBackendException {
    requireNonBlank(node, "node");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(observedValue, "observedValue");
    if (ownerOf(node, observedValue).filter(owner::isSameOwner).isPresent()) {
      if (store.deleteIfEquals(node, key, observedValue)) {
        released(node, owner, observedValue);
        return true;
      }
      LOG.debug(
          "node {}: observed lock {}=\"{}\" of {} changed before release; reading it again",
          node,
          key,
          observedValue,
          owner);
    }
    return release(node, owner);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here, from the value this instance last wrote for the owner on that node ({@code false} if
   * there is none — its memo evicted, or written by another process: continuity cannot be shown),
   * always asking the store, so that a lock removed by another writer (an operator's {@code kubectl
   * annotate node … hami.io/mutex.lock-}, {@code hami-lock-doctor unlock --force}, HAMi's Go
   * scheduler judging the stamp expired by a skewed clock) and perhaps acquired by another pod is
   * seen here, not at the device plugin:
   *
   * <ul>
   *   <li>its own stamp (this process's clock) at most half the lock timeout old ⇒ one {@link
   *       LockStore#read}: {@code true} iff the stored text is exactly the value written. (The
   *       stamp alone cannot tell: expiry is not the only way a lock is lost.)
   *   <li>older ⇒ one {@code replaceIfEquals} of exactly that value by a re-stamped one, which is
   *       itself the confirmation: applied ⇒ {@code true}, and the owner keeps the lock at least
   *       half a lock timeout more (other processes count a new value afresh); not applied ⇒ {@code
   *       false} — it was taken over, removed, or re-written even for the same pod (someone may
   *       have allocated in between).
   * </ul>
   *
   * <p><b>Cost:</b> one request per call (per lock key of a bind); before issue 23 a stamp under
   * half the timeout cost none and a lost lock went unnoticed for up to half the lock timeout. The
   * read must reflect every write acknowledged before it ({@code NodeAnnotationLockStore} reads
   * with a plain {@code GET} of the node, which kube-apiserver serves from etcd by a quorum read,
   * not from its watch cache). What remains: a removal that lands after this answer and before the
   * caller's action is not seen (one round trip), and cannot be excluded — a Binding cannot be made
   * conditional on a node annotation; what it causes shows in the pods' allocation annotations (the
   * planned {@code hami-lock-doctor audit} of issue 23).
   */
  @Override
  public boolean stillHeld(String node, LockOwner owner) throws LockBackendException {
    requireNonBlank(node, "node");
    Objects.requireNonNull(owner, "owner");
    String mine = written.heldBy(node, owner).orElse(null);
    if (mine == null) {
      LOG.debug("node {}: {} holds no lock {} written by this process", node, owner, key);
      return false;
    }
    Instant now = clock.instant();
    Duration age;
    try {
      age = Ages.between(LockRecordCodec.parse(mine).acquiredAt(), now);
    } catch (MalformedLockException e) {
      return false; // cannot happen for a value this class wrote
    }
    String fresh = LockRecordCodec.format(LockRecord.of(now, owner));
    Optional<String> found; // what the store holds instead of our value
    if (age.compareTo(lockTimeout.dividedBy(2)) <= 0 || fresh.equals(mine)) {
      found = store.read(node, key);
      if (found.filter(mine::equals).isPresent()) {
        return true;
      }
    } else if (store.replaceIfEquals(node, key, mine, fresh)
        instanceof CasResult.NotWritten refused) {
      found = refused.witness();
    } else {
      forgetValue(node, mine);
      written.wrote(node, owner, fresh);
      LOG.debug(
          "node {}: {} re-stamped lock {} (was \"{}\", {} old)",
          node,
          owner,
          key,
          mine,
          format(age));
      return true;
    }
    LOG.debug(
        "node {}: {} no longer holds lock {}=\"{}\" ({} old; now {})",
        node,
        owner,
        key,
        mine,
        format(age),
        found.map(v -> "\"" + v + "\"").orElse("free"));
    return false;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: the stored text exactly, one {@link LockStore#read} call.
   */
  @Override
  public Optional<String> readValue(String node) throws LockBackendException {
    requireNonBlank(node, "node");
    return store.read(node, key);
  }

  /**
   * @return this lock: {@link #readValue} and {@link #release(String, LockOwner, String)}
   */
  @Override
  public Optional<ObservedValueRelease> observedValueRelease() {
    return Optional.of(this);
  }

  @Override
  public Optional<LockRecord> read(String node)
      throws MalformedLockException, LockBackendException {
    requireNonBlank(node, "node");
    Optional<String> value = store.read(node, key);
    return value.isEmpty() ? Optional.empty() : Optional.of(LockRecordCodec.parse(value.get()));
  }

  @Override
  public String toString() {
    return "StoreNodeLock[key="
        + key
        + ", lockTimeout="
        + GoDuration.format(lockTimeout)
        + ", store="
        + store
        + "]";
  }

  // ---------------------------------------------------------------------------------------

  private void released(String node, LockOwner owner, String value) {
    written.released(node, owner, value);
    forgetValue(node, value);
    LOG.debug("node {}: {} released lock {}=\"{}\"", node, owner, key, value);
    listener.released(node, key, owner);
  }

  /** {@code value} left {@code node} by this process's hand: every memo forgets it. */
  private void forgetValue(String node, String value) {
    written.gone(node, value);
    shownHeld.remove(new NodeValue(node, value));
    sightings.gone(node, value);
    liveness.gone(node, value);
  }

  /** The owner of a value: parsed namespace/name, with the UID if this process wrote it. */
  private Optional<LockOwner> ownerOf(String node, String value) {
    LockRecord record;
    try {
      record = LockRecordCodec.parse(value);
    } catch (MalformedLockException e) {
      return Optional.empty();
    }
    return record.owner().map(parsed -> written.withKnownUid(node, parsed, value));
  }

  private Verdict judge(String node, String value, LockOwner requester, Instant now)
      throws LockBackendException {
    Instant seenAt = sightings.firstSeen(node, value, now);
    LockRecord record;
    try {
      record = LockRecordCodec.parse(value);
    } catch (MalformedLockException e) {
      return judgeMalformed(node, value, e, now, seenAt);
    }
    Optional<LockOwner> holder = ownerOf(node, value);
    if (holder.filter(requester::isSameOwner).isPresent()) {
      return Verdict.of(Kind.SAME_OWNER, "re-entry");
    }
    OwnerLiveness.HolderStatus status =
        holder.isPresent() ? holderStatus(node, value, holder.get()) : null;
    // the rules themselves: one implementation, shared with tools that only inspect locks
    LockJudgement.Result r =
        LockJudgement.judge(
            node, Optional.of(record), Optional.ofNullable(status), now, seenAt, lockTimeout);
    Duration age = r.stampAge().orElseThrow();
    String ages =
        "age "
            + format(age)
            + " by its timestamp, first seen by this process "
            + format(r.seenFor())
            + " ago";
    return switch (r.decision()) {
      case DANGLING -> Verdict.of(Kind.DANGLING, "owner " + holder.get() + " is " + status.state());
      case STUCK_ALLOCATING ->
          stuckAllocating(node, value, record, holder.get(), status, age, ages);
      case EXPIRED ->
          Verdict.of(Kind.EXPIRED, ages + ", lock timeout " + GoDuration.format(lockTimeout));
      default -> held(node, value, record, holder, age, ages);
    };
  }

  /** A value that does not parse: expired once seen for the lock timeout, else held. */
  private Verdict judgeMalformed(
      String node, String value, MalformedLockException e, Instant now, Instant seenAt) {
    LockJudgement.Result r =
        LockJudgement.judge(node, Optional.empty(), Optional.empty(), now, seenAt, lockTimeout);
    if (r.decision() == LockJudgement.Decision.EXPIRED) {
      return Verdict.of(
          Kind.EXPIRED,
          "malformed value first seen "
              + format(r.seenFor())
              + " ago, lock timeout "
              + GoDuration.format(lockTimeout)
              + "; "
              + e.getMessage());
    }
    return Verdict.held(
        new LockContentionException(
            "node "
                + node
                + " has been locked within "
                + GoDuration.format(lockTimeout)
                + " by an unknown owner ("
                + key
                + "=\""
                + value
                + "\" is malformed, first seen by this process "
                + format(r.seenFor())
                + " ago; "
                + e.getMessage()
                + ")",
            node,
            key,
            Optional.of(value),
            Optional.empty(),
            Optional.of(r.seenFor()),
            e));
  }

  /** The holder's liveness; a failed read names the node, holder and value. */
  private OwnerLiveness.HolderStatus holderStatus(String node, String value, LockOwner holder)
      throws LockBackendException {
    try {
      return liveness.status(node, value, holder);
    } catch (LockBackendException e) {
      throw new LockBackendException(
          e.kind(),
          "node "
              + node
              + ": cannot tell whether "
              + holder
              + ", holder of lock "
              + key
              + "=\""
              + value
              + "\", is alive: "
              + e.getMessage(),
          e);
    }
  }

  /** An expired lock kept because its holder may still be served by the device plugin. */
  private Verdict stuckAllocating(
      String node,
      String value,
      LockRecord record,
      LockOwner holder,
      OwnerLiveness.HolderStatus status,
      Duration age,
      String ages) {
    String who = holder.namespace() + "/" + holder.name();
    String message =
        "node "
            + node
            + ": lock "
            + key
            + "=\""
            + value
            + "\" has expired ("
            + ages
            + ", lock timeout "
            + GoDuration.format(lockTimeout)
            + ") but its holder "
            + who
            + " is bound to this node, "
            + status.phase().map(Enum::name).orElse("phase unknown")
            + ", bind-phase "
            + status.bindPhase().map(OwnerLiveness.BindPhase::wireValue).orElse("absent")
            + ": the device plugin may still serve it, so the lock is not taken over (HAMi#3096). It is"
            + " released when the plugin finishes, or free it by deleting pod "
            + who;
    warnStuckOnce(node, value, message);
    return Verdict.held(
        new LockContentionException(
            message, node, key, Optional.of(value), Optional.of(record), Optional.of(age), null));
  }

  /** A live lock of another owner. */
  private Verdict held(
      String node,
      String value,
      LockRecord record,
      Optional<LockOwner> holder,
      Duration age,
      String ages) {
    String who =
        holder
            .map(h -> h.namespace() + "/" + h.name())
            .orElse("an unknown owner (legacy or ownerless value)");
    return Verdict.held(
        new LockContentionException(
            "node "
                + node
                + " has been locked within "
                + GoDuration.format(lockTimeout)
                + " by "
                + who
                + " ("
                + key
                + "=\""
                + value
                + "\", "
                + ages
                + ")",
            node,
            key,
            Optional.of(value),
            Optional.of(record),
            Optional.of(age),
            null));
  }

  /**
   * WARN once per (node, value) that an expired lock is kept because its holder may still be
   * allocated.
   */
  private void warnStuckOnce(String node, String value, String message) {
    if (stuckWarned.first(node, value)) {
      LOG.warn("{}", message);
    } else {
      LOG.debug("{}", message);
    }
  }

  private static String format(Duration d) {
    return Ages.format(d);
  }

  private enum Kind {
    SAME_OWNER,
    EXPIRED,
    DANGLING,
    HELD
  }

  private static final class Verdict {
    final Kind kind;
    final String why;
    final LockContentionException contention;

    private Verdict(Kind kind, String why, LockContentionException contention) {
      this.kind = kind;
      this.why = why;
      this.contention = contention;
    }

    static Verdict of(Kind kind, String why) {
      return new Verdict(kind, why, null);
    }

    static Verdict held(LockContentionException e) {
      return new Verdict(Kind.HELD, e.getMessage(), e);
    }
  }
}
