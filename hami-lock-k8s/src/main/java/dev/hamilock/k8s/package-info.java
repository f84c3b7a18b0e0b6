/**
 * hami-lock on client-java, the lock only: {@link dev.hamilock.k8s.KubernetesLockStack} and {@link
 * dev.hamilock.k8s.KubernetesLockOwners}; the bind flow's ports are in hami-lock-k8s-bind.
 */
package dev.hamilock.k8s;
