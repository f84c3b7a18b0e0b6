package dev.hamilock.doctor;

import java.time.Duration;
import java.util.Optional;

/**
 * One lock annotation on one node, decoded.
 *
 * @param node the node
 * @param key the annotation key, e.g. {@code hami.io/mutex.lock}
 * @param value the annotation value, exactly
 * @param state the state from the library's lock rules
 * @param holder {@code namespace/name} of the holder, when the value names one
 * @param age now minus the value's timestamp; empty for a malformed value
 * @param detail what the state means here and what to do, one sentence or two
 */
public record LockEntry(
    String node,
    String key,
    String value,
    LockState state,
    Optional<String> holder,
    Optional<Duration> age,
    String detail) {}
