/**
 * A faithful Java re-implementation of HAMi's own Go algorithms (snapshot {@code 4707fb02}), used
 * as HAMi's peer in interoperability tests and as the baseline in benchmarks. Test support only; it
 * does not depend on hami-lock's own lock code.
 *
 * <ul>
 *   <li>{@link dev.hamilock.reference.HamiNodeLock}: {@code pkg/util/nodelock/nodelock.go}.
 *   <li>{@link dev.hamilock.reference.HamiBindLocking}, {@link dev.hamilock.reference.VendorLock},
 *       {@link dev.hamilock.reference.NvidiaVendorLock}: the lock part of {@code
 *       pkg/scheduler/scheduler.go} Bind and {@code pkg/device/nvidia/device.go}.
 *   <li>{@link dev.hamilock.reference.HamiDevicePlugin}, {@link
 *       dev.hamilock.reference.HamiPodDevices}: the device plugin's hand-off ({@code
 *       pkg/util/util.go}, {@code nvinternal/plugin/server.go}, {@code util.go}).
 * </ul>
 *
 * <p>Errors carry HAMi's Go text; contention is detected with {@link
 * dev.hamilock.reference.HamiLockContentionException#isContention(Throwable)}.
 */
package dev.hamilock.reference;
