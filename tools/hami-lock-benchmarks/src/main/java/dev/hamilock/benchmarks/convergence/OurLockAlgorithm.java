package dev.hamilock.benchmarks.convergence;

import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.KubernetesLockOwners;
import dev.hamilock.k8s.KubernetesLockStack;
import java.util.List;
import java.util.Optional;

/**
 * This library, (c) with and (d) without the watch wake-up: {@link KubernetesLockStack} from {@code
 * hami-lock-k8s} with its defaults (one-request JSON-Patch acquire and release on the node's {@code
 * hami.io/mutex.lock} annotation, 422 = contended then one GET, pod owner liveness, 100 ms poll, 28
 * s retry timeout) and core's gang-aware {@code NodeLockAcquirer}. With the watch, each replica
 * runs one shared node watch feeding the fair release signal, which wakes one waiter per release;
 * without it, waiters only poll every 100 ms.
 *
 * <p>The device plugin is another process with its own {@link KubernetesLockStack} (watch off).
 * Like {@code DevicePluginHandoff} (hami-lock-bind), it reads the node's lock value when it looks
 * for the pod to serve ({@link NodeLock#readValue}, one GET, on the lookup client: counted as
 * plugin lookup) and releases by exact owner with that value ({@link
 * dev.hamilock.core.ObservedValueRelease#release}, the lock's {@link NodeLock#observedValueRelease}
 * capability: one compare-and-delete JSON Patch; a value changed since the lookup falls back to GET
 * + compare-and-delete).
 */
public final class OurLockAlgorithm implements Algorithm {

  private final boolean watch;

  /**
   * @param watch whether replicas run the node watch that wakes waiters on release
   */
  public OurLockAlgorithm(boolean watch) {
    this.watch = watch;
  }

  @Override
  public String key() {
    return watch ? "ours-watch" : "ours-poll";
  }

  @Override
  public String label() {
    return watch
        ? "(c) hami-lock: one-request CAS + watch wake-up"
        : "(d) hami-lock: one-request CAS, polling only";
  }

  @Override
  public boolean ours() {
    return true;
  }

  @Override
  public Replica replica(ProcessContext process) {
    KubernetesLockStack locks =
        KubernetesLockStack.builder(process.client())
            .watch(watch)
            .watchApiClient(process.watchClient())
            .retryPolicy(RetryPolicy.builder().retryTimeout(process.retryTimeout()).build())
            .build();
    List<NodeLock> lockList = List.of(locks.nodeLock());
    return new Replica() {
      @Override
      public void acquire(String node, GangPod pod) throws Exception {
        locks
            .acquirer()
            .acquire(node, pod.owner(), KubernetesLockOwners.isGangMember(pod.pod()), lockList);
      }

      @Override
      public void release(String node, GangPod pod) throws Exception {
        locks.acquirer().releaseAll(node, pod.owner(), lockList);
      }

      @Override
      public void close() {
        locks.close();
      }
    };
  }

  @Override
  public Plugin plugin(ProcessContext process) {
    KubernetesLockStack locks = KubernetesLockStack.builder(process.client()).watch(false).build();
    KubernetesLockStack lookupLocks =
        KubernetesLockStack.builder(process.lookupClient()).watch(false).build();
    return new Plugin() {
      @Override
      public Optional<String> lookup(String node, GangPod pod) throws Exception {
        return lookupLocks.nodeLock().readValue(node);
      }

      @Override
      public void release(String node, GangPod pod, Optional<String> observedLockValue)
          throws Exception {
        if (observedLockValue.isPresent()) {
          locks
              .nodeLock()
              .observedValueRelease()
              .orElseThrow()
              .release(node, pod.owner(), observedLockValue.get());
        } else {
          locks.nodeLock().release(node, pod.owner());
        }
      }

      @Override
      public void close() {
        locks.close();
        lookupLocks.close();
      }
    };
  }
}
