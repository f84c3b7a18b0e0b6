/**
 * An in-process, linearizable cluster implementing the ports, a lock store on its node annotations
 * and owner liveness over its pods, with latency and fault injection: for tests, property runs
 * and the demo's fast path.
 */
package dev.hamilock.bind.memory;
