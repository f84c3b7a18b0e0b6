/**
 * How long a bind's re-fit reads wait on the API server right after a write ({@code --reads}): the
 * measurement behind the hand-off analysis in {@code examples/gang-demo/SCHEDULER.md}.
 */
package dev.hamilock.benchmarks.reads;
