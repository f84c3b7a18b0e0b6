/**
 * Feeding lock waiters: {@link dev.hamilock.k8s.watch.NodeLockWatch}, one Node watch per client for
 * every lock key, tells core's {@link dev.hamilock.core.FairReleaseQueue} of each key about
 * releases; the queue wakes one waiter per release in arrival order (HAMi#2589).
 */
package dev.hamilock.k8s.watch;
