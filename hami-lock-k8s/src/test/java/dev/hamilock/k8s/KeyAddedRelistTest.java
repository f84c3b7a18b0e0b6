package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.Waiter;
import dev.hamilock.k8s.watch.NodeLockWatch;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultHandle;
import dev.hamilock.testkit.FaultRule;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A lock key added to a running {@link NodeLockWatch} makes it relist, because the values of the
 * new key are unknown until then. If that relist fails (the API server answers the LIST with 500),
 * the watch must relist again, not resume the old stream: resumed, it would call the new key's
 * queue reliable while it knows none of the key's locks, and the release of a lock that was held
 * before the key was added would never be signalled (its waiter sleeps out the watched poll
 * interval, 1 s, or more). Found by review (breaker2); failed before the fix (the relist's "keys
 * changed" flag was cleared before the LIST and not set again when it failed).
 */
class KeyAddedRelistTest {

  static final String OTHER_KEY = "example.org/npu.lock";

  ApiServerEmulator k8s;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  @Test
  void aKeyAddedWhileTheRelistFailsIsListedBeforeItsQueueIsReliable() throws Exception {
    String node = new Cluster(k8s).node(Cluster.unique("key-added"));
    setAnnotation(
        node, OTHER_KEY, "2026-08-01T06:00:00Z,ns,holder"); // held before the key is watched
    try (NodeLockWatch watch =
        NodeLockWatch.builder(k8s.newApiClient(Duration.ofSeconds(5))).build()) {
      watch.releaseSignal(NodeLock.DEFAULT_KEY);
      watch.start();
      assertThat(watch.awaitSynced(Duration.ofSeconds(5))).isTrue();
      long lists = k8s.requestCount("list", "nodes");

      FaultHandle failLists =
          k8s.addFault(
              FaultRule.matching()
                  .verb("list")
                  .resource("nodes")
                  .respondStatus(500, "InternalError", "the test fails the relist"));
      FairReleaseQueue other;
      try {
        other = watch.releaseSignal(OTHER_KEY); // the running watch relists for it: that LIST fails
        awaitTrue(() -> k8s.requestCount("list", "nodes") > lists, "a relist was attempted");
      } finally {
        failLists.remove();
      }

      awaitTrue(
          () -> watch.observedLockValue(node, OTHER_KEY).isPresent() && other.isReliable(node),
          "the new key's lock, held before it was added, is in the watched view once its queue is reliable");
      try (Waiter waiter = other.join(node)) {
        setAnnotation(node, OTHER_KEY, null);
        assertThat(waiter.await(Duration.ofSeconds(5)))
            .as("the release of the new key's lock wakes its waiter")
            .isTrue();
      }
    }
  }

  private void setAnnotation(String node, String key, String value) {
    k8s.mutate(
        "nodes",
        null,
        node,
        o -> {
          ObjectNode meta = (ObjectNode) o.get("metadata");
          ObjectNode ann =
              meta.has("annotations")
                  ? (ObjectNode) meta.get("annotations")
                  : meta.putObject("annotations");
          if (value == null) {
            ann.remove(key);
          } else {
            ann.put(key, value);
          }
          return o;
        });
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 10 s: " + what);
      }
      Thread.sleep(5);
    }
  }
}
