package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.Fx.Outcome;
import io.kubernetes.client.custom.V1Patch;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Fault rules, latency, counters, write history and unknown-field injection. */
class FaultAndHookTest {
  private static final String PATCH =
      "{\"metadata\":{\"annotations\":{\"hami.io/mutex.lock\":\"me\"}}}";

  @Test
  void dropResponseAfterApplyIsAnAmbiguousOutcome() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of("other", "x"));
      String rv = fx.rv("node-a");
      String conditional =
          "{\"metadata\":{\"resourceVersion\":\""
              + rv
              + "\",\"annotations\":{\"hami.io/mutex.lock\":\"me\"}}}";
      FaultHandle h =
          fx.emu.addFault(
              FaultRule.matching()
                  .verb("patch")
                  .resource("nodes")
                  .times(5)
                  .dropResponseAfterApply());
      Outcome o = fx.patchNode("node-a", V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, conditional);
      assertThat(o.code()).as("the client saw no answer").isZero();
      assertThat(h.hits()).isGreaterThanOrEqualTo(1);
      assertThat(fx.ann("node-a", "hami.io/mutex.lock"))
          .as("but the write happened")
          .isEqualTo("me");
      List<WriteRecord> writes = fx.emu.history("nodes", null, "node-a");
      assertThat(writes).extracting(WriteRecord::verb).containsExactly("seed", "patch");
      assertThat(writes.get(1).annotations()).containsEntry("hami.io/mutex.lock", "me");
    }
  }

  @Test
  void respondRuleShortCircuitsAndExpires() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of());
      FaultHandle h =
          fx.emu.addFault(
              FaultRule.matching()
                  .pathMatching("/api/v1/nodes/node-a")
                  .times(1)
                  .respondStatus(429, "TooManyRequests", "slow down"));
      Outcome first = fx.raw("GET", "/api/v1/nodes/node-a", null, null);
      assertThat(first.code()).isEqualTo(429);
      assertThat(first.reason()).isEqualTo("TooManyRequests");
      assertThat(h.isActive()).isFalse();
      assertThat(fx.raw("GET", "/api/v1/nodes/node-a", null, null).code()).isEqualTo(200);
    }
  }

  @Test
  void closeConnectionDoesNotApply() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of("other", "x"));
      fx.emu.addFault(FaultRule.matching().verb("patch").closeConnection());
      Outcome o = fx.patchNode("node-a", V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, PATCH);
      assertThat(o.code()).isZero();
      assertThat(fx.ann("node-a", "hami.io/mutex.lock")).isNull();
      fx.emu.clearFaults();
      assertThat(fx.patchNode("node-a", V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, PATCH).code())
          .isEqualTo(200);
    }
  }

  @Test
  void latencyAndDelayAreAddedToTheRoundTrip() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of());
      Duration injected = Duration.ofMillis(60);
      fx.emu.setLatency(Latency.fixed(injected));
      long t0 = System.nanoTime();
      fx.api.readNode("node-a").execute();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(injected);
      fx.emu.setLatency(Latency.NONE);
      fx.emu.addFault(FaultRule.matching().verb("get").times(1).delay(injected));
      t0 = System.nanoTime();
      fx.api.readNode("node-a").execute();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(injected);
    }
  }

  @Test
  void countersCountByVerbAndResource() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of("other", "x"));
      fx.api.readNode("node-a").execute();
      fx.api.readNode("node-a").execute();
      fx.api.listNode().execute();
      fx.patchNode("node-a", V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, PATCH);
      assertThat(fx.emu.requestCount("get", "nodes")).isEqualTo(2);
      assertThat(fx.emu.requestCount("list", "nodes")).isEqualTo(1);
      assertThat(fx.emu.requestCount("patch", "nodes")).isEqualTo(1);
      assertThat(fx.emu.requestCounts()).containsEntry(new RequestKey("get", "nodes"), 2L);
      fx.emu.resetCounters();
      assertThat(fx.emu.totalRequests()).isZero();
    }
  }

  @Test
  void historyRecordsEveryCommittedWriteButNoNoOps() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of("other", "x"));
      fx.patchNode("node-a", V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, PATCH);
      fx.patchNode("node-a", V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, PATCH); // no-op
      fx.raw("DELETE", "/api/v1/nodes/node-a", null, null);
      List<WriteRecord> h = fx.emu.history("Node", null, "node-a");
      assertThat(h)
          .extracting(WriteRecord::eventType)
          .containsExactly("ADDED", "MODIFIED", "DELETED");
      assertThat(h).extracting(WriteRecord::resourceVersion).isSorted();
      assertThat(h.get(1).annotations()).containsEntry("hami.io/mutex.lock", "me");
    }
  }
}
