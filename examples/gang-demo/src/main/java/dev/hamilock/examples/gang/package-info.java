/**
 * Placeholder for the gang demo (issue 7): the guide's {@code gang-training} PodGroup bound
 * concurrently from several scheduler replicas through hami-lock's bind flow, compared with
 * fail-fast binding. The demo's author fills this package.
 */
package dev.hamilock.examples.gang;
