package dev.hamilock.reference;

import static com.google.common.base.Preconditions.checkArgument;

import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.PatchUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faithful Java re-implementation of the hand-off half of HAMi's NVIDIA device plugin ({@code
 * pkg/util/util.go} {@code GetPendingPod}/{@code GetAllocatePodByNode}; {@code
 * pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go} {@code Allocate} and {@code util.go}
 * {@code GetNextDeviceRequest}, {@code eraseNextDeviceTypeFromAnnotation}, {@code
 * PodAllocationTrySuccess}, {@code PodAllocationSuccess}/{@code Failed}; spec §3.1–§3.3), non-MIG
 * path only; container environment, mounts and CDI are out of scope.
 *
 * <p>Thread-safe: {@link #allocate} holds a plugin-wide mutex, as HAMi does.
 */
public final class HamiDevicePlugin {

  /** NVIDIA's to-allocate pod annotation. */
  public static final String TO_ALLOCATE_ANNOTATION = "hami.io/vgpu-devices-to-allocate";

  /** Bind phase pod annotation. */
  public static final String BIND_PHASE_ANNOTATION = "hami.io/bind-phase";

  /** Bind time pod annotation (Unix seconds). */
  public static final String BIND_TIME_ANNOTATION = "hami.io/bind-time";

  /** Assigned node pod annotation. */
  public static final String ASSIGNED_NODE_ANNOTATION = "hami.io/vgpu-node";

  /** Bind phase values. */
  public static final String PHASE_ALLOCATING = "allocating";

  /** Bind phase written when every NVIDIA entry was handed out. */
  public static final String PHASE_SUCCESS = "success";

  /** Bind phase written on any Allocate failure after the pod was found. */
  public static final String PHASE_FAILED = "failed";

  private static final Logger LOG = LoggerFactory.getLogger(HamiDevicePlugin.class);

  private final ApiClient apiClient;
  private final CoreV1Api coreApi;
  private final HamiNodeLock nodeLock;
  private final List<String> devicesToHandle;
  private final ReentrantLock pluginMutex = new ReentrantLock();

  /**
   * A plugin handling NVIDIA only ({@code DevicesToHandle = [NVIDIA]}).
   *
   * @param apiClient client for every request
   * @param nodeLock the lock whose {@code releaseNodeLock} completes the hand-off (its in-process
   *     mutex map plays the plugin process's)
   * @throws NullPointerException if either is null
   */
  public HamiDevicePlugin(ApiClient apiClient, HamiNodeLock nodeLock) {
    this(apiClient, nodeLock, List.of(NvidiaVendorLock.VENDOR));
  }

  /**
   * @param apiClient client for every request
   * @param nodeLock the lock used for the completion release
   * @param devicesToHandle HAMi's {@code DevicesToHandle}: vendor words whose presence (substring)
   *     in the remaining to-allocate text means "more containers pending"
   * @throws NullPointerException if any is null
   * @throws IllegalArgumentException if {@code devicesToHandle} has an empty word
   */
  public HamiDevicePlugin(
      ApiClient apiClient, HamiNodeLock nodeLock, List<String> devicesToHandle) {
    Objects.requireNonNull(apiClient, "apiClient");
    Objects.requireNonNull(nodeLock, "nodeLock");
    Objects.requireNonNull(devicesToHandle, "devicesToHandle");
    devicesToHandle.forEach(w -> HamiNodeLock.requireArg(w, "devicesToHandle word"));
    this.apiClient = apiClient;
    this.coreApi = new CoreV1Api(apiClient);
    this.nodeLock = nodeLock;
    this.devicesToHandle = List.copyOf(devicesToHandle);
  }

  /**
   * HAMi's {@code GetAllocatePodByNode}: the pod named by the node's lock.
   *
   * @param node node name
   * @return the lock owner pod; empty when there is no lock or its namespace or name is empty
   *     (legacy value, {@code T,,})
   * @throws HamiException malformed lock value ({@code ParseNodeLock} error)
   * @throws ApiException node GET failed, or the owner pod GET failed (NotFound included)
   */
  public Optional<V1Pod> getAllocatePodByNode(String node) throws ApiException, HamiException {
    HamiNodeLock.requireArg(node, "node");
    String value =
        HamiNodeLock.lockAnnotation(HamiNodeLock.call(() -> coreApi.readNode(node).execute()));
    if (value == null) {
      return Optional.empty();
    }
    HamiLockValue lock = HamiLockValue.parse(value);
    if (lock.namespace().isEmpty() || lock.name().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        HamiNodeLock.call(
            () -> coreApi.readNamespacedPod(lock.name(), lock.namespace()).execute()));
  }

  /**
   * HAMi's {@code GetPendingPod(node)}: the lock owner first (any phase, any node); otherwise the
   * first pod, in API list order, of {@code list pods --all-namespaces --field-selector
   * spec.nodeName=<node>} that is Pending, has {@code hami.io/bind-time}, has {@code
   * hami.io/bind-phase} ∈ {allocating, success} and {@code hami.io/vgpu-node} = node.
   *
   * @param node node name
   * @return the pod the plugin will serve
   * @throws HamiException {@code no binding pod found on node <node>}, or a malformed lock value
   * @throws ApiException a GET or the list failed
   */
  public V1Pod getPendingPod(String node) throws ApiException, HamiException {
    Optional<V1Pod> owner = getAllocatePodByNode(node);
    if (owner.isPresent()) {
      return owner.get();
    }
    V1PodList list =
        HamiNodeLock.call(
            () ->
                coreApi.listPodForAllNamespaces().fieldSelector("spec.nodeName=" + node).execute());
    for (V1Pod p : list.getItems()) {
      if (p.getStatus() == null || !"Pending".equals(p.getStatus().getPhase())) {
        continue;
      }
      Map<String, String> annotations =
          p.getMetadata() == null ? null : p.getMetadata().getAnnotations();
      if (annotations == null || !annotations.containsKey(BIND_TIME_ANNOTATION)) {
        continue;
      }
      String phase = annotations.get(BIND_PHASE_ANNOTATION);
      if (!PHASE_ALLOCATING.equals(phase) && !PHASE_SUCCESS.equals(phase)) {
        continue;
      }
      if (node.equals(annotations.get(ASSIGNED_NODE_ANNOTATION))) {
        return p;
      }
    }
    throw new HamiException("no binding pod found on node " + node);
  }

  /**
   * One kubelet {@code Allocate} call on {@code node} (HAMi takes the node from env {@code
   * NODE_NAME}). Steps: find the pod ({@link #getPendingPod}; failure ⇒ error, no completion);
   * decode its {@code hami.io/vgpu-devices-to-allocate}; for each container request: take the first
   * non-empty entry (none ⇒ {@code device request not found}), its device count must equal the
   * request's ({@code device number not matched}), blank it and merge-patch the re-encoded text;
   * then re-GET the pod and, if its to-allocate text no longer contains any handled vendor word,
   * complete with success. Any failure after the pod was found completes with failure. Completion =
   * merge patch {@code hami.io/bind-phase}, then owner-checked {@link
   * HamiNodeLock#releaseNodeLock}; completion errors are only logged.
   *
   * @param node node name
   * @param deviceCountsPerContainerRequest number of device IDs kubelet passes in each container
   *     request
   * @return the outcome (never throws for API or HAMi errors)
   * @throws NullPointerException if {@code node} or the list is null
   * @throws IllegalArgumentException if {@code node} is empty or the list has a null/negative count
   */
  public AllocateResult allocate(String node, List<Integer> deviceCountsPerContainerRequest) {
    HamiNodeLock.requireArg(node, "node");
    Objects.requireNonNull(deviceCountsPerContainerRequest, "deviceCountsPerContainerRequest");
    checkArgument(
        deviceCountsPerContainerRequest.stream().allMatch(c -> c != null && c >= 0),
        "deviceCountsPerContainerRequest must be a list of non-negative counts, got %s",
        deviceCountsPerContainerRequest);
    pluginMutex.lock();
    try {
      V1Pod pod;
      try {
        pod = getPendingPod(node);
      } catch (ApiException | HamiException e) {
        LOG.debug("Allocate found no pod on node {}: {}", node, GoFormats.errorText(e));
        return new AllocateResult(
            Optional.empty(), List.of(), false, Optional.empty(), Optional.of(e));
      }
      List<List<ContainerDevice>> handedOut = new ArrayList<>();
      try {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        String toAllocate = annotations == null ? null : annotations.get(TO_ALLOCATE_ANNOTATION);
        if (toAllocate == null) {
          throw new HamiException("device request not found");
        }
        List<List<ContainerDevice>> pending = HamiPodDevices.decode(toAllocate);
        for (int requested : deviceCountsPerContainerRequest) {
          int index = firstNonEmpty(pending);
          if (index < 0) {
            throw new HamiException("device request not found");
          }
          List<ContainerDevice> devices = pending.get(index);
          if (devices.size() != requested) {
            throw new HamiException("device number not matched");
          }
          pending.set(index, new ArrayList<>());
          patchPodAnnotation(pod, TO_ALLOCATE_ANNOTATION, HamiPodDevices.encode(pending));
          handedOut.add(devices);
        }
      } catch (ApiException | HamiException e) {
        complete(node, pod, PHASE_FAILED);
        return new AllocateResult(
            Optional.of(pod), handedOut, false, Optional.of(PHASE_FAILED), Optional.of(e));
      }
      boolean completed = tryComplete(node, pod);
      return new AllocateResult(
          Optional.of(pod),
          handedOut,
          true,
          completed ? Optional.of(PHASE_SUCCESS) : Optional.empty(),
          Optional.empty());
    } finally {
      pluginMutex.unlock();
    }
  }

  /** {@code PodAllocationTrySuccess}: re-GET; any handled vendor word left ⇒ pending. */
  private boolean tryComplete(String node, V1Pod pod) {
    V1Pod refreshed;
    try {
      refreshed =
          HamiNodeLock.call(
              () ->
                  coreApi
                      .readNamespacedPod(
                          pod.getMetadata().getName(), pod.getMetadata().getNamespace())
                      .execute());
    } catch (ApiException e) {
      LOG.warn(
          "Error getting pod {}/{}: {}",
          pod.getMetadata().getNamespace(),
          pod.getMetadata().getName(),
          GoFormats.errorText(e));
      return false;
    }
    Map<String, String> annotations =
        refreshed.getMetadata() == null ? null : refreshed.getMetadata().getAnnotations();
    String remaining = annotations == null ? null : annotations.get(TO_ALLOCATE_ANNOTATION);
    String text = remaining == null ? "" : remaining;
    for (String word : devicesToHandle) {
      if (text.contains(word)) {
        return false;
      }
    }
    complete(node, pod, PHASE_SUCCESS);
    return true;
  }

  /**
   * {@code updatePodAnnotationsAndReleaseLock}: bind-phase patch, then owner-checked release;
   * errors logged.
   */
  private void complete(String node, V1Pod pod, String phase) {
    String ns = pod.getMetadata().getNamespace();
    String name = pod.getMetadata().getName();
    try {
      patchPodAnnotation(pod, BIND_PHASE_ANNOTATION, phase);
    } catch (ApiException e) {
      LOG.warn(
          "Failed to patch pod annotations for pod {}/{}: {}", ns, name, GoFormats.errorText(e));
    }
    try {
      nodeLock.releaseNodeLock(node, ns, name, false);
    } catch (ApiException | HamiException e) {
      LOG.warn("Failed to release node lock for node {}: {}", node, GoFormats.errorText(e));
    }
  }

  private void patchPodAnnotation(V1Pod pod, String key, String value) throws ApiException {
    String ns = pod.getMetadata().getNamespace();
    String name = pod.getMetadata().getName();
    String body =
        "{\"metadata\":{\"annotations\":{"
            + GoFormats.jsonString(key)
            + ":"
            + GoFormats.jsonString(value)
            + "}}}";
    HamiNodeLock.call(
        () ->
            PatchUtils.patch(
                V1Pod.class,
                () -> coreApi.patchNamespacedPod(name, ns, new V1Patch(body)).buildCall(null),
                V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
                apiClient));
  }

  private static int firstNonEmpty(List<List<ContainerDevice>> pending) {
    for (int i = 0; i < pending.size(); i++) {
      if (!pending.get(i).isEmpty()) {
        return i;
      }
    }
    return -1;
  }
}
