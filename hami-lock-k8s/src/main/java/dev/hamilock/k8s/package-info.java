/**
 * Entry point of hami-lock on client-java: {@link dev.hamilock.k8s.KubernetesLockStack} builds
 * HAMi's node lock ({@code hami.io/mutex.lock}) over Node annotations with one request per lock
 * operation, dangling takeover by pod liveness, a shared release watch and core's gang-aware
 * acquire loop. The package {@code dev.hamilock.k8s.bind} is reserved for the client-java ports
 * of the bind flow.
 */
package dev.hamilock.k8s;
