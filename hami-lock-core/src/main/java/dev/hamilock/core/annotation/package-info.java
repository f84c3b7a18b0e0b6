/**
 * The client-neutral half of the Node-annotation lock backend: the wire bytes of its patches
 * ({@link dev.hamilock.core.annotation.AnnotationPatches}), the compare-and-set verdicts over one
 * {@link dev.hamilock.core.annotation.AnnotationTransport} ({@link
 * dev.hamilock.core.annotation.AnnotationLockStore}) and the release detection of a node watch
 * ({@link dev.hamilock.core.annotation.NodeLockReleases}). A Kubernetes client adapter supplies
 * only the transport (one PATCH, one GET, its failures classified) and the event stream.
 */
package dev.hamilock.core.annotation;
