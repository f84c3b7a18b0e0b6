/**
 * The client-neutral half of the Node-annotation lock backend: the wire bytes of its patches
 * ({@link dev.hamilock.core.annotation.AnnotationPatches}), the compare-and-set verdicts over one
 * {@link dev.hamilock.core.annotation.AnnotationTransport} ({@link
 * dev.hamilock.core.annotation.AnnotationLockStore}) and the node watch that wakes waiters on
 * release ({@link dev.hamilock.core.annotation.AbstractNodeLockWatch}). A Kubernetes client adapter
 * supplies only the transport (one PATCH, one GET, its failures classified) and the watch's list
 * page, stream and event decoding.
 */
package dev.hamilock.core.annotation;
