package dev.hamilock.fabric8.bind;

import dev.hamilock.bind.HamiStack;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.Fabric8NodeLockWatch;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Objects;
import java.util.Optional;

/**
 * The whole hami-lock stack on fabric8, equal to client-java's {@code KubernetesHamiStack}: bind's
 * {@link HamiStack} (its flows {@code podBinder()}, {@code extenderFilter()}, {@code
 * devicePluginHandoff(vendor)}, {@code awaitReady}, {@code close()}, documented there) with
 * fabric8's parts: the {@link Fabric8Cluster} ports and {@link Fabric8LockStack#backend} with one
 * {@link Fabric8NodeLockWatch} (daemon thread {@code hami-lock-fabric8-node-watch-N}, stopped by
 * the stack's close) feeding every lock key's wake-up queue.
 *
 * <pre>{@code
 * try (HamiStack hami = Fabric8HamiStack.builder(client).build()) { // HAMi's defaults
 *     hami.awaitReady(Duration.ofSeconds(10));
 *     BindResult r = hami.podBinder().bind("default", "train-0", podUid, "gpu-node-1");
 * }
 * }</pre>
 *
 * Request timeouts and client-side retries are the client's {@code Config} ({@link
 * Fabric8Cluster}); without the watch (waiters only poll every 100 ms): {@code
 * .backend(Fabric8LockStack.backend(client, Optional.empty()))}.
 */
public final class Fabric8HamiStack {

  private Fabric8HamiStack() {}

  /**
   * @param client a fabric8 client; not closed by the stack
   * @return {@link HamiStack#builder()} with fabric8's ports and lock backend as the client's
   *     defaults
   * @throws NullPointerException if {@code client} is null
   */
  public static HamiStack.Builder builder(KubernetesClient client) {
    Objects.requireNonNull(client, "client");
    return HamiStack.builder()
        .clientDefaults(
            () -> Fabric8Cluster.create(client),
            s ->
                Fabric8LockStack.backend(
                    client, Optional.of(Fabric8NodeLockWatch.create(client, s.waitClock()))));
  }
}
