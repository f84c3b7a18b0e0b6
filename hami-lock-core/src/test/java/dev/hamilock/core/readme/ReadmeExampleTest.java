package dev.hamilock.core.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.GangMembership;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.InMemoryNodeLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The README's usage snippet, compiled and run, so the README cannot drift from the API: the lines
 * between the {@code // README:begin} and {@code // README:end} markers must appear verbatim
 * (modulo indentation) and in order in the README ({@link ReadmeSnippet}).
 */
class ReadmeExampleTest {

  @Test
  void snippetRunsAndHoldsTheLock() throws Exception {
    // README:begin
    NodeLock lock = InMemoryNodeLock.create(); // or the Kubernetes annotation lock
    RetryPolicy policy =
        RetryPolicy.builder()
            .retryTimeout("28s") // Go duration, as HAMi's flag
            .build(); // rejects >= the 30s extender timeout
    NodeLockAcquirer acquirer = NodeLockAcquirer.create(policy);

    LockOwner pod = LockOwner.of("default", "gang-worker-1");
    boolean gang =
        GangMembership.isMember(
            Map.of("scheduling.x-k8s.io/pod-group", "gang-training"), Optional.empty());

    LockAcquisition held = acquirer.acquire("gpu-node-a", pod, gang, List.of(lock));
    // ... write the allocation annotations and POST the Binding; after a successful bind
    // the device plugin releases the lock. On failure release it yourself:
    lock.release("gpu-node-a", pod);
    // README:end

    assertThat(held.keys()).containsExactly(NodeLock.DEFAULT_KEY);
    assertThat(held.attempts()).isEqualTo(1);
    assertThat(lock.read("gpu-node-a")).isEmpty();

    // The lock really excludes: a non-member fails fast while another pod holds it.
    lock.acquire("gpu-node-a", pod);
    assertThatThrownBy(
            () ->
                acquirer.acquire(
                    "gpu-node-a", LockOwner.of("default", "other"), false, List.of(lock)))
        .isInstanceOf(LockContentionException.class);
    assertThat(policy.retryTimeout()).isEqualTo(Duration.ofSeconds(28));
  }

  @Test
  void readmeShowsTheSnippetVerbatim() throws Exception {
    ReadmeSnippet.assertShownIn(
        Path.of("src/test/java/dev/hamilock/core/readme/ReadmeExampleTest.java"),
        Path.of("../README.md"));
  }
}
