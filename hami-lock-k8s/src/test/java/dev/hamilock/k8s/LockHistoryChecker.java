package dev.hamilock.k8s;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.MalformedLockException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiPredicate;

/**
 * Checks a node's committed lock values (from the emulator's write history): the lock must never
 * pass from one holder to another without a release (value absent) in between, unless the passage
 * is a legitimate takeover (expiry or dangling owner) as judged by the caller.
 */
final class LockHistoryChecker {

  private LockHistoryChecker() {}

  /**
   * @param values lock value after each write, oldest first
   * @param legitimateTakeover (old value, new value) → whether that direct passage was allowed
   * @return human-readable violations, empty if none
   */
  static List<String> violations(
      List<Optional<String>> values, BiPredicate<String, String> legitimateTakeover) {
    List<String> out = new ArrayList<>();
    Optional<String> prev = Optional.empty();
    for (int i = 0; i < values.size(); i++) {
      Optional<String> cur = values.get(i);
      if (prev.isPresent()
          && cur.isPresent()
          && !prev.get().equals(cur.get())
          && !sameOwner(prev.get(), cur.get())
          && !legitimateTakeover.test(prev.get(), cur.get())) {
        out.add(
            "write "
                + i
                + ": lock passed from \""
                + prev.get()
                + "\" to \""
                + cur.get()
                + "\" without a release");
      }
      prev = cur;
    }
    return out;
  }

  private static boolean sameOwner(String a, String b) {
    Optional<LockOwner> oa = owner(a);
    Optional<LockOwner> ob = owner(b);
    return oa.isPresent() && ob.isPresent() && oa.get().isSameOwner(ob.get());
  }

  private static Optional<LockOwner> owner(String value) {
    try {
      return LockRecordCodec.parse(value).owner();
    } catch (MalformedLockException e) {
      return Optional.empty();
    }
  }

  static Optional<LockRecord> record(String value) {
    try {
      return Optional.of(LockRecordCodec.parse(value));
    } catch (MalformedLockException e) {
      return Optional.empty();
    }
  }
}
