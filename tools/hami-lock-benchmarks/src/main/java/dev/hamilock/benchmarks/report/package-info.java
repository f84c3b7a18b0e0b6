/**
 * Turns measurements into {@code tools/hami-lock-benchmarks/results/}: {@code results.md}, {@code
 * results.csv}, {@code jmh.csv} and the chart {@code convergence.svg}, with the goals of issue 8
 * evaluated ({@link dev.hamilock.benchmarks.report.Goals}).
 */
package dev.hamilock.benchmarks.report;
