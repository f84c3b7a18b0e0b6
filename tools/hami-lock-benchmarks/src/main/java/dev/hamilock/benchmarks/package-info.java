/**
 * Entry point of the benchmark suite ({@link dev.hamilock.benchmarks.BenchmarksMain}): JMH fit and
 * codec benchmarks, then the gang-convergence harness, then the report.
 */
package dev.hamilock.benchmarks;
