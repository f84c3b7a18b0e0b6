/**
 * The Kubernetes backend of the node lock: {@link dev.hamilock.k8s.lock.NodeAnnotationLockStore}
 * (core's {@code LockStore} as conditional JSON Patches on a Node annotation) and {@link
 * dev.hamilock.k8s.lock.PodOwnerLiveness} (core's {@code OwnerLiveness} as a live pod GET).
 */
package dev.hamilock.k8s.lock;
