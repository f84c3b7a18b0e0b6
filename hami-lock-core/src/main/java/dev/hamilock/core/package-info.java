/**
 * The HAMi node-lock vocabulary: lock values and their codec, the {@link
 * dev.hamilock.core.NodeLock} port, typed exceptions, retry policy and the liveness, release-signal
 * and listener ports (HAMi {@code pkg/util/nodelock/nodelock.go}, {@code
 * pkg/scheduler/scheduler.go}).
 */
package dev.hamilock.core;
