/**
 * The client-neutral half of the Node-annotation lock backend: patches, store and node watch; a
 * client adapter supplies only the {@link dev.hamilock.core.annotation.AnnotationTransport} and the
 * watch's list page and stream.
 */
package dev.hamilock.core.annotation;
