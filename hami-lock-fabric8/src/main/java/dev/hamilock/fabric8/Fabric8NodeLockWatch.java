package dev.hamilock.fabric8;

import dev.hamilock.core.WaitClock;
import dev.hamilock.core.annotation.AbstractNodeLockWatch;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One shared watch of all Nodes per fabric8 client feeding core's {@link
 * dev.hamilock.core.FairReleaseQueue} of each lock key: core's {@link AbstractNodeLockWatch} (the
 * protocol, release detection, reliable mode and lifecycle, documented there) over {@link
 * Fabric8WatchTransport}. One daemon thread ({@code hami-lock-fabric8-node-watch-N}), server-side
 * watch timeout 5 min.
 */
public final class Fabric8NodeLockWatch extends AbstractNodeLockWatch {

  private static final AtomicInteger THREADS = new AtomicInteger();

  private Fabric8NodeLockWatch(KubernetesClient client, WaitClock time) {
    super(
        Fabric8WatchTransport.create(client),
        r -> {
          Thread t = new Thread(r, "hami-lock-fabric8-node-watch-" + THREADS.incrementAndGet());
          t.setDaemon(true);
          return t;
        },
        time,
        Duration.ofMinutes(5));
  }

  /**
   * @param client a fabric8 client; not closed by the watch
   * @return the watch, not started; add keys with {@link #releaseSignal(String)}
   * @throws NullPointerException if {@code client} is null
   */
  public static Fabric8NodeLockWatch create(KubernetesClient client) {
    return create(client, WaitClock.SYSTEM);
  }

  /**
   * @param client a fabric8 client; not closed by the watch
   * @param time the random source of the reconnect back-off's jitter and the {@code timeoutSeconds}
   *     spread (the acquire loop's seam)
   * @return the watch, not started; add keys with {@link #releaseSignal(String)}
   * @throws NullPointerException if an argument is null
   */
  public static Fabric8NodeLockWatch create(KubernetesClient client, WaitClock time) {
    return new Fabric8NodeLockWatch(Objects.requireNonNull(client, "client"), time);
  }

  @Override
  public Fabric8NodeLockWatch start() {
    super.start();
    return this;
  }
}
