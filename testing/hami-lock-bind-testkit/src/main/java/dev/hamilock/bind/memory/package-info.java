/**
 * An in-process, linearizable cluster implementing hami-lock-bind's ports, a lock store on its node
 * annotations and owner liveness over its pods, with latency and fault injection: for tests,
 * property runs and the gang demo's fast path (test support in hami-lock-bind-testkit, not in the
 * hami-lock-bind jar).
 */
package dev.hamilock.bind.memory;
