package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.util.PatchUtils;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The real API server's launcher end to end (needs testing/realcluster/build; runs with
 * -Preal-apiserver): start, version, RBAC admin, counters from /metrics, etcd compaction, stop on
 * stdin close and on SIGTERM with nothing left behind, a busy port, a server never ready.
 */
@Tag("real-apiserver")
class RealApiServerTest {

  @Test
  void startsServesCountsCompactsAndStopsWithoutLeftovers() throws Exception {
    // without the watch cache, reads at a resourceVersion go to etcd (1.37 serves them from the
    // cache's snapshots otherwise, compacted or not)
    RealApiServer s = RealApiServer.builder().apiserverArg("--watch-cache=false").start();
    Path dir = s.directory();
    long pid = s.pid();
    try {
      assertThat(dir).isDirectory();
      assertThat(s.kubeconfigFile()).isRegularFile().startsWith(dir);
      assertThat(s.url()).startsWith("https://127.0.0.1:");
      String expected =
          RealApiServer.requiredKubernetes(
                  RealApiServerBadInputTest.root().resolve(RealApiServer.GO_MOD))
              .orElseThrow();
      assertThat(s.kubernetesVersion()).isEqualTo(expected);
      assertThat(new VersionApi(s.apiClient()).getCode().execute().getGitVersion())
          .isEqualTo(expected);

      // counters: the server's own, without the helper's seeding requests
      s.createNode("counted", Map.of("a", "b"));
      s.resetCounters();
      CoreV1Api api = new CoreV1Api(s.apiClient());
      String patch =
          "[{\"op\":\"test\",\"path\":\"/metadata/annotations/x\",\"value\":null},"
              + "{\"op\":\"add\",\"path\":\"/metadata/annotations/x\",\"value\":\"1\"}]";
      PatchUtils.patch(
          io.kubernetes.client.openapi.models.V1Node.class,
          () -> api.patchNode("counted", new V1Patch(patch)).buildCall(null),
          V1Patch.PATCH_FORMAT_JSON_PATCH,
          s.apiClient());
      api.readNode("counted").execute();
      assertThat(s.get("nodes", null, "counted"))
          .hasValueSatisfying(
              n ->
                  assertThat(n.path("metadata").path("annotations").path("x").asText())
                      .isEqualTo("1"));
      assertThat(s.requestCount("patch", "nodes")).isEqualTo(1);
      assertThat(s.requestCount("get", "nodes")).isEqualTo(1);

      // compaction through etcd's gateway: an exact read at an older resourceVersion is then 410
      String oldRv = api.listNode().execute().getMetadata().getResourceVersion();
      s.mutate(
          "nodes",
          null,
          "counted",
          o -> {
            ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("metadata").get("annotations"))
                .put("y", "2");
            return o;
          });
      long compacted = s.compactEtcd();
      assertThat(compacted).isGreaterThan(Long.parseLong(oldRv));
      assertThatThrownBy(
              () -> api.listNode().resourceVersion(oldRv).resourceVersionMatch("Exact").execute())
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(410));
      V1NodeList now = api.listNode().execute();
      assertThat(now.getItems()).extracting(n -> n.getMetadata().getName()).contains("counted");
    } finally {
      s.close();
    }
    assertThat(dir).doesNotExist();
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
  }

  @Test
  void sigtermStopsBothServersAndRemovesTheDirectory() throws Exception {
    RealApiServer s = RealApiServer.start();
    Path dir = s.directory();
    try {
      s.process().destroy(); // SIGTERM, and the JDK closes the child's stdout/stderr pipes
      assertThat(s.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(s.process().exitValue()).as("exit code (141 would be death by SIGPIPE)").isZero();
      assertThat(dir).doesNotExist();
    } finally {
      s.close(); // already stopped: nothing left to do; removes (and reports) any leftover
    }
  }

  @Test
  void aBusyPortIsNamedAndNothingIsLeftBehind() throws Exception {
    try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      int port = busy.getLocalPort();
      assertThatThrownBy(() -> RealApiServer.builder().securePort(port).start())
          .isInstanceOfSatisfying(
              RealApiServerException.class,
              e -> {
                assertThat(e.getMessage())
                    .contains("--secure-port " + port + " is busy")
                    .contains("pass --secure-port 0")
                    .doesNotContain("left");
                assertThat(e.directory()).hasValueSatisfying(d -> assertThat(d).doesNotExist());
                assertThat(
                        ProcessHandle.of(e.pid().orElseThrow())
                            .map(ProcessHandle::isAlive)
                            .orElse(false))
                    .isFalse();
              });
    }
  }

  @Test
  void aServerNeverReadyInTimeIsStoppedAndItsDirectoryRemoved() {
    assertThatThrownBy(
            () -> RealApiServer.builder().startupTimeout(Duration.ofMillis(1500)).start())
        .isInstanceOfSatisfying(
            RealApiServerException.class,
            e -> {
              assertThat(e.getMessage())
                  .contains("was not ready within PT1.5S")
                  .contains("startupTimeout");
              assertThat(e.directory())
                  .hasValueSatisfying(d -> assertThat(Files.exists(d)).isFalse());
              assertThat(
                      ProcessHandle.of(e.pid().orElseThrow())
                          .map(ProcessHandle::isAlive)
                          .orElse(false))
                  .isFalse();
            });
  }

  @Test
  void anUnreadableSchedulerConfigFailsBeforeAnythingStarts() throws Exception {
    Path bin = RealApiServerBadInputTest.root().resolve(RealApiServer.DEFAULT_BINARY);
    Process p =
        new ProcessBuilder(bin.toString(), "--with-scheduler", "x.yaml")
            .redirectErrorStream(true)
            .start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(1);
    assertThat(out).contains("--with-scheduler: cannot read x.yaml");
  }
}
