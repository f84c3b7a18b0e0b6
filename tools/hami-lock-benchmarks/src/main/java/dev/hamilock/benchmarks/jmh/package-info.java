/**
 * JMH benchmarks: the extender Filter over 5,000 nodes × 8 GPUs ({@link
 * dev.hamilock.benchmarks.jmh.FitBenchmark}) and the HAMi wire codecs ({@link
 * dev.hamilock.benchmarks.jmh.CodecBenchmark}), with deterministic inputs ({@link
 * dev.hamilock.benchmarks.jmh.ClusterFixtures}) and a programmatic runner ({@link
 * dev.hamilock.benchmarks.jmh.JmhSuite}) that adds the GC profiler.
 */
package dev.hamilock.benchmarks.jmh;
