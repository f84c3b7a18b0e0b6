package dev.hamilock.k8s;

import dev.hamilock.core.NodeLock;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * {@link LockSuiteOnBackendsTest} with fabric8 as the lock's client (hami-lock-fabric8's store and
 * owner liveness), on the same backends; the cluster is still seeded and judged through the
 * backend. The watch test ({@code weWaitOnHamisLockThroughTheWatch…}) stays on client-java's stack:
 * hami-lock-fabric8 has no release watch yet.
 */
class LockSuiteOnFabric8Test extends LockSuiteOnBackendsTest {

  @Override
  NodeLock newLock(TestClock c) {
    KubernetesClient client = Fabric8Replicas.client(k8s);
    opened.add(client::close);
    return Fabric8Replicas.lock(client, c);
  }
}
