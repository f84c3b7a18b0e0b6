/**
 * The HAMi-compatible bind flow and its neighbours, over the backend-neutral ports of {@link
 * dev.hamilock.bind.cluster}:
 *
 * <ul>
 *   <li>{@link dev.hamilock.bind.PodBinder}: lock → re-read usage and re-fit under the lock →
 *       allocation annotations → Binding, with typed {@link dev.hamilock.bind.BindResult}s (HAMi
 *       {@code pkg/scheduler/scheduler.go} Bind, spec §2.3, §3.4);
 *   <li>{@link dev.hamilock.bind.ExtenderFilter}: HAMi's Filter without a lock (spec §2.2);
 *   <li>{@link dev.hamilock.bind.DevicePluginHandoff}: the device plugin's Allocate-side hand-off
 *       (spec §3);
 *   <li>{@link dev.hamilock.bind.NodeLockProvider}: the lock of each vendor lock key.
 * </ul>
 *
 * <p><b>One error model</b> ({@link dev.hamilock.bind.FlowFailure}): the flows return typed
 * results; the ports below them throw {@link dev.hamilock.bind.cluster.ClusterException}.
 */
package dev.hamilock.bind;
