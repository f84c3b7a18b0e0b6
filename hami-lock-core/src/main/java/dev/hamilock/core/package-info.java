/**
 * The HAMi node-lock vocabulary: lock values and their wire codec ({@link
 * dev.hamilock.core.LockRecordCodec}), the {@link dev.hamilock.core.NodeLock} port, typed
 * exceptions, {@link dev.hamilock.core.RetryPolicy}, {@link dev.hamilock.core.GangMembership},
 * {@link dev.hamilock.core.GoDuration}, and the {@link dev.hamilock.core.OwnerLiveness}, {@link
 * dev.hamilock.core.LockReleaseSignal} (with its {@link dev.hamilock.core.Waiter} handles and the
 * fair {@link dev.hamilock.core.FairReleaseQueue}) and {@link dev.hamilock.core.NodeLockListener}
 * ports. Behaviour follows HAMi {@code pkg/util/nodelock/nodelock.go}, {@code
 * pkg/scheduler/scheduler.go} and {@code pkg/util/util.go}.
 */
package dev.hamilock.core;
