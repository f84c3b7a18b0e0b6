/**
 * The gang-aware, all-or-nothing acquire loop over one or several node locks ({@link
 * dev.hamilock.core.acquire.NodeLockAcquirer}), after HAMi's {@code acquireNodeLocks} and {@code
 * lockAllDevices} in {@code pkg/scheduler/scheduler.go}.
 */
package dev.hamilock.core.acquire;
