/**
 * The gang-convergence harness: N gang members released at once into the bind phase of each
 * node-lock {@link dev.hamilock.benchmarks.convergence.Algorithm} on the in-process API emulator;
 * time to the last member bound and handed off, and API requests by verb ({@link
 * dev.hamilock.benchmarks.convergence.ConvergenceHarness}). Baselines: HAMi's own algorithm from
 * {@code hami-reference} ({@link dev.hamilock.benchmarks.convergence.HamiPollingAlgorithm}) and
 * fail-fast with kube-scheduler backoff ({@link
 * dev.hamilock.benchmarks.convergence.FailFastBackoffAlgorithm}).
 */
package dev.hamilock.benchmarks.convergence;
