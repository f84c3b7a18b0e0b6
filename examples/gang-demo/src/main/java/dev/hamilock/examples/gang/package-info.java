/**
 * The gang demo (issue 7): the guide's {@code gang-training} PodGroup released by Coscheduling's
 * Permit into hami-lock's bind flow from several scheduler replicas at once, in the embedded
 * Kubernetes API emulator with a simulated HAMi device plugin per node, verified (no overlapping
 * slices, every member bound, no lock left) and compared with fail-fast binding. Entry point:
 * {@link dev.hamilock.examples.gang.GangDemo}; sub-packages: {@code input} (manifests, preflight
 * warnings, quorum and fit checks), {@code run} (backends, the run, the lock timeline), {@code
 * report} (text, JSON, SVG).
 */
package dev.hamilock.examples.gang;
