package dev.hamilock.benchmarks.convergence;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.testkit.KubeBackend;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Objects;

/**
 * What a simulated process (scheduler replica or device plugin) gets from the harness.
 *
 * @param emulator the API server: the emulator, or the real kube-apiserver with {@code --backend
 *     real}
 * @param client the process's own request client (finite read timeout)
 * @param watchClient the process's own client for watches (no read timeout)
 * @param backoffScale kube-scheduler backoff divisor for {@link FailFastBackoffAlgorithm} (1 = real
 *     1 s → 10 s; 10 = 100 ms → 1 s)
 * @param retryTimeout how long gang members keep retrying (HAMi's {@code
 *     --node-lock-retry-timeout}, 28 s)
 * @param lookupClient the client for a device plugin's pod lookup ({@link
 *     Algorithm.Plugin#lookup}); the harness counts its requests apart and leaves them out of the
 *     lock counts. For a replica: unused (the same as {@code client})
 */
public record ProcessContext(
    KubeBackend emulator,
    ApiClient client,
    ApiClient watchClient,
    double backoffScale,
    Duration retryTimeout,
    ApiClient lookupClient) {
  /**
   * @throws NullPointerException if a component is null
   * @throws IllegalArgumentException if {@code backoffScale} is below 1
   */
  public ProcessContext {
    Objects.requireNonNull(emulator, "emulator");
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(watchClient, "watchClient");
    Objects.requireNonNull(retryTimeout, "retryTimeout");
    Objects.requireNonNull(lookupClient, "lookupClient");
    checkArgument(backoffScale >= 1, "backoffScale must be at least 1, got %s", backoffScale);
  }
}
