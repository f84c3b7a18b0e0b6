/**
 * One resource's list and watch on one thread, in the watch's own order ({@link
 * dev.hamilock.core.watch.ListAndWatch}, client-go's {@code Reflector.ListAndWatch} without an
 * informer's queue), over raw JSON: a client adapter supplies only the {@link
 * dev.hamilock.core.watch.ListAndWatch.Transport}. The node lock watch and the bind's watched pods
 * are its sinks.
 */
package dev.hamilock.core.watch;
