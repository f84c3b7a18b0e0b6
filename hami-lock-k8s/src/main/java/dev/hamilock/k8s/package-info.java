/**
 * Entry point of hami-lock on client-java, the lock only: {@link
 * dev.hamilock.k8s.KubernetesLockStack} builds HAMi's node lock ({@code hami.io/mutex.lock}) over
 * Node annotations with one request per lock operation, dangling takeover by pod liveness, a shared
 * release watch and core's gang-aware acquire loop, from one {@link
 * dev.hamilock.k8s.LockStackSettings} value; {@link dev.hamilock.k8s.KubernetesLockOwners} maps a
 * {@code V1Pod} to its lock owner and gang membership. The bind flow's client-java ports and the
 * whole-stack facade are in hami-lock-k8s-bind.
 */
package dev.hamilock.k8s;
