package dev.hamilock.examples.extender;

import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.extender.ExtenderConfig;
import dev.hamilock.extender.ExtenderServer;
import dev.hamilock.extender.HamiExtender;
import dev.hamilock.k8s.KubernetesNodeLocks;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.k8s.bind.KubernetesHami;
import dev.hamilock.k8s.watch.NodeLockWatch;
import io.kubernetes.client.openapi.ApiClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The scheduler extender wired on one {@link ApiClient} and serving:
 * <ol>
 *   <li>{@link KubernetesHami} with the flags' retry policy ({@code --node-lock-retry-timeout},
 *       100 ms poll, bounded by {@code --extender-http-timeout}) and lock expiry
 *       ({@code --node-lock-timeout}): the {@code KubernetesCluster} ports and one node lock per
 *       vendor lock key ({@code hami.io/mutex.lock} for NVIDIA) with its release watch;</li>
 *   <li>{@link HamiExtender#fromConfig} over those ports and locks: the Filter and bind flows
 *       with the flags' node and device policies and retry policy, the bind flow with
 *       {@link KubernetesHami#lockListener()}, so a gang member's bind on a reused HTTP thread
 *       ends its place in the node's fair wake-up queue;</li>
 *   <li>{@link ExtenderServer} on {@code --bind-address}:{@code --port}, {@code /readyz} ready
 *       once every lock watch has listed the nodes and opened its stream.</li>
 * </ol>
 * API requests time out after 10 s, or half the extender HTTP timeout if that is shorter (a
 * request must end before kube-scheduler gives up on the call). Close it to stop serving and stop
 * the watches.
 */
public final class RunningExtender implements AutoCloseable {
  private final KubernetesHami hami;
  private final HamiExtender extender;
  private final ExtenderServer server;
  private final AtomicBoolean closed = new AtomicBoolean();

  private RunningExtender(KubernetesHami hami, HamiExtender extender, ExtenderServer server) {
    this.hami = hami;
    this.extender = extender;
    this.server = server;
  }

  /**
   * Builds the stack and starts serving.
   *
   * @param config the validated flags
   * @param apiClient the cluster
   * @param registry the device vendors (e.g. {@link VendorRegistry#discover()})
   * @return the running extender
   * @throws IOException if the listen address cannot be bound (the watches are stopped again)
   * @throws IllegalArgumentException if the stack refuses the settings (the message names them)
   */
  public static RunningExtender start(ExtenderConfig config, ApiClient apiClient, VendorRegistry registry)
      throws IOException {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(apiClient, "apiClient");
    Objects.requireNonNull(registry, "registry");
    Duration half = config.extenderHttpTimeout().dividedBy(2);
    Duration requestTimeout = half.compareTo(KubernetesCluster.DEFAULT_REQUEST_TIMEOUT) < 0
        ? half : KubernetesCluster.DEFAULT_REQUEST_TIMEOUT;
    KubernetesHami hami = KubernetesHami.builder(apiClient)
        .registry(registry)
        .retryPolicy(config.retryPolicy())
        .lockTimeout(config.nodeLockTimeout())
        .requestTimeout(requestTimeout)
        .build();
    try {
      HamiExtender extender = HamiExtender.fromConfig(config, hami.cluster(), hami.cluster(), hami.registry(),
          hami.nodeLocks(), hami.lockListener());
      ExtenderServer server = ExtenderServer.start(config, extender, () -> synced(hami),
          ExtenderServer.DEFAULT_THREADS);
      return new RunningExtender(hami, extender, server);
    } catch (IOException | RuntimeException e) {
      hami.close();
      throw e;
    }
  }

  /** @return whether every lock key's node watch has synced (listed the nodes, stream opened) */
  public boolean ready() {
    return synced(hami);
  }

  private static boolean synced(KubernetesHami hami) {
    for (String key : hami.lockKeys()) {
      Optional<NodeLockWatch> w = hami.lockStack(key).flatMap(KubernetesNodeLocks::watch);
      if (w.isPresent()) {
        try {
          if (!w.get().awaitSynced(Duration.ZERO)) {
            return false;
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return true;
  }

  /** @return the bound address (the actual port with {@code --port=0}) */
  public InetSocketAddress address() {
    return server.address();
  }

  /** @return the bound port */
  public int port() {
    return server.port();
  }

  /** @return the hami-lock stack (ports, lock stacks, device-plugin hand-off) */
  public KubernetesHami hami() {
    return hami;
  }

  /** @return the filter and bind handlers behind the HTTP routes */
  public HamiExtender extender() {
    return extender;
  }

  /** Stops serving (waiting up to 1 s for running exchanges), then stops the lock watches. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      server.close();
    } finally {
      hami.close();
    }
  }
}
