package dev.hamilock.reference;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;

/**
 * The two node-lock methods of HAMi's vendor interface {@code Devices} ({@code
 * pkg/device/devices.go}, spec §4.1): each vendor decides itself whether the pod concerns it and
 * succeeds without locking otherwise.
 */
public interface VendorLock {

  /**
   * HAMi's {@code Devices.LockNode(node, pod)}.
   *
   * @param node node name
   * @param pod the pod being bound
   * @throws HamiException contention ({@link HamiLockContentionException#isContention}) or another
   *     HAMi error
   * @throws ApiException an API call failed
   */
  void lockNode(String node, V1Pod pod) throws ApiException, HamiException;

  /**
   * HAMi's {@code Devices.ReleaseNodeLock(node, pod)} (owner-checked).
   *
   * @param node node name
   * @param pod the pod whose lock is released
   * @throws HamiException a HAMi error
   * @throws ApiException an API call failed
   */
  void releaseNodeLock(String node, V1Pod pod) throws ApiException, HamiException;
}
