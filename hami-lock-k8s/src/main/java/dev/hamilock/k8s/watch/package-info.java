/**
 * Waking lock waiters: {@link dev.hamilock.k8s.watch.NodeLockWatch}, one Node watch per client,
 * feeds a {@link dev.hamilock.k8s.watch.FairLockReleaseSignal} that wakes one waiter per release
 * in arrival order (HAMi#2589).
 */
package dev.hamilock.k8s.watch;
