package dev.hamilock.core.store;

import dev.hamilock.core.LockOwner;
import java.util.Optional;

/**
 * The lock values this process wrote, and for whom (with the UID the wire value cannot carry).
 * Bounded, least recently used dropped: a dropped entry costs a read or UID precision, never a
 * wrong release. Thread-safe.
 */
final class WrittenValues {

  /** (node, namespace, name) → the value this process last wrote for that owner. */
  private final BoundedMemo<NodeOwner, String> held;

  /** (node, value this process wrote) → the owner it wrote it for, when it has a UID. */
  private final BoundedMemo<NodeValue, LockOwner> owners;

  WrittenValues(int capacity) {
    this.held = new BoundedMemo<>(capacity);
    this.owners = new BoundedMemo<>(capacity);
  }

  /** This process wrote {@code value} on {@code node} for {@code owner}. */
  void wrote(String node, LockOwner owner, String value) {
    held.put(NodeOwner.of(node, owner), value);
    if (owner.uid().isPresent()) {
      owners.put(new NodeValue(node, value), owner);
    }
  }

  /** The value this process last wrote on {@code node} for {@code owner}'s namespace/name. */
  Optional<String> heldBy(String node, LockOwner owner) {
    return Optional.ofNullable(held.get(NodeOwner.of(node, owner)));
  }

  /** The owner with its UID if this process wrote {@code value} for it, else {@code parsed}. */
  LockOwner withKnownUid(String node, LockOwner parsed, String value) {
    LockOwner written = owners.get(new NodeValue(node, value));
    return written != null
            && written.namespace().equals(parsed.namespace())
            && written.name().equals(parsed.name())
        ? written
        : parsed;
  }

  /** {@code value} is no longer on {@code node} (released, re-stamped, taken over). */
  void gone(String node, String value) {
    owners.remove(new NodeValue(node, value));
  }

  /** {@code owner} released {@code value} on {@code node}. */
  void released(String node, LockOwner owner, String value) {
    held.remove(NodeOwner.of(node, owner), value);
    gone(node, value);
  }

  /** {@code owner} holds nothing on {@code node} (found free on release). */
  void holdsNothing(String node, LockOwner owner) {
    held.remove(NodeOwner.of(node, owner));
  }

  private record NodeOwner(String node, String namespace, String name) {
    static NodeOwner of(String node, LockOwner owner) {
      return new NodeOwner(node, owner.namespace(), owner.name());
    }
  }
}
