package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real-server launcher's bad input that needs no Go and no built binary: each names the cause
 * and the fix. (Busy port and a server that never gets ready: RealApiServerTest.)
 */
class RealApiServerBadInputTest {

  @TempDir Path tmp;

  static Path root() {
    return RealApiServer.repositoryRoot(Path.of(System.getProperty("user.dir")))
        .orElseThrow(
            () ->
                new AssertionError(
                    "tests run inside the repository, which has " + RealApiServer.GO_MOD));
  }

  Path fakeBinary(String versionLine) throws IOException {
    Path f = tmp.resolve("realcluster");
    Files.writeString(f, "#!/bin/sh\necho '" + versionLine + "'\n");
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwx------"));
    return f;
  }

  @Test
  void aMissingBinarySaysToRunTheBuildScript() {
    Path missing = tmp.resolve("no-such-realcluster");
    assertThatThrownBy(() -> RealApiServer.builder().binary(missing).start())
        .isInstanceOf(RealApiServerException.class)
        .hasMessageContaining("no realcluster binary at " + missing)
        .hasMessageContaining("run testing/realcluster/build");
  }

  @Test
  void withoutGoTheHintSaysHowToInstallIt() {
    assertThat(RealApiServer.goHint("/nonexistent-dir"))
        .contains("Go is not on the PATH")
        .contains("install Go 1.26")
        .contains("testing/realcluster/build");
    assertThat(RealApiServer.goHint(tmp.toString() + ":")).contains("Go is not on the PATH");
  }

  @Test
  void aBinaryFromAnotherKubernetesVersionIsStale() throws Exception {
    String required =
        RealApiServer.requiredKubernetes(root().resolve(RealApiServer.GO_MOD)).orElseThrow();
    assertThat(required).startsWith("v1.");
    Path bin = fakeBinary("realcluster kubernetes v1.0.0 etcd v3.0.0");
    assertThatThrownBy(() -> RealApiServer.builder().binary(bin).start())
        .isInstanceOf(RealApiServerException.class)
        .hasMessageContaining("stale realcluster binary")
        .hasMessageContaining(
            "built from k8s.io/kubernetes v1.0.0 but testing/realcluster/go.mod requires "
                + required)
        .hasMessageContaining("run testing/realcluster/build");
  }

  @Test
  void aBinaryOlderThanItsSourcesIsStale() throws Exception {
    String required =
        RealApiServer.requiredKubernetes(root().resolve(RealApiServer.GO_MOD)).orElseThrow();
    Path bin = fakeBinary("realcluster kubernetes " + required + " etcd v3.7.0");
    Files.setLastModifiedTime(bin, FileTime.fromMillis(0));
    assertThatThrownBy(() -> RealApiServer.builder().binary(bin).start())
        .isInstanceOf(RealApiServerException.class)
        .hasMessageContaining("stale realcluster binary")
        .hasMessageContaining("changed after the binary was built")
        .hasMessageContaining("run testing/realcluster/build");
  }

  @Test
  void aForeignBinaryIsNamed() throws Exception {
    Path bin = fakeBinary("kube-apiserver v1.37.2");
    assertThatThrownBy(() -> RealApiServer.builder().binary(bin).start())
        .isInstanceOf(RealApiServerException.class)
        .hasMessageContaining("printed \"kube-apiserver v1.37.2\"")
        .hasMessageContaining("run testing/realcluster/build");
  }

  @Test
  void theBuildScriptWithoutGoSaysHowToInstallIt() throws Exception {
    Path script = root().resolve("testing/realcluster/build");
    ProcessBuilder pb =
        new ProcessBuilder("/bin/bash", script.toString()).redirectErrorStream(true);
    pb.environment().clear();
    pb.environment().putAll(Map.of("PATH", tmp.toString(), "HOME", tmp.toString()));
    Process p = pb.start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(1);
    assertThat(out).contains("error: no Go toolchain on PATH").contains("Install Go 1.26");
    assertThat(root().resolve("testing/realcluster/bin/realcluster.partial")).doesNotExist();
  }

  @Test
  void metricsAreParsedByVerbAndResourceSummedOverCodes() {
    String text =
        String.join(
            "\n",
            "# HELP apiserver_request_total [STABLE] Counter of apiserver requests",
            "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"nodes\",scope=\"resource\",subresource=\"\",verb=\"PATCH\",version=\"v1\"} 3",
            "apiserver_request_total{code=\"422\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"nodes\",scope=\"resource\",subresource=\"\",verb=\"PATCH\",version=\"v1\"} 2",
            "apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"binding\",verb=\"POST\",version=\"v1\"} 1",
            "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 4",
            "apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 9",
            "apiserver_request_total_other{verb=\"GET\"} 1");
    assertThat(RealApiServer.parseRequestTotals(text))
        .isEqualTo(
            Map.of(
                new RequestKey("patch", "nodes"), 5L,
                new RequestKey("create", "pods/binding"), 1L,
                new RequestKey("list", "pods"), 4L));
  }

  @Test
  void requestTimesAreSummedOverScopesAndLeaveOutNonResourceUrlsAndBuckets() {
    String text =
        String.join(
            "\n",
            "# TYPE apiserver_request_duration_seconds histogram",
            "apiserver_request_duration_seconds_bucket{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\",le=\"0.005\"} 2",
            "apiserver_request_duration_seconds_sum{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 0.25",
            "apiserver_request_duration_seconds_count{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 4",
            "apiserver_request_duration_seconds_sum{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 0.75",
            "apiserver_request_duration_seconds_count{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 6",
            "apiserver_request_duration_seconds_sum{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"binding\",verb=\"POST\",version=\"v1\"} 0.01",
            "apiserver_request_duration_seconds_count{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"binding\",verb=\"POST\",version=\"v1\"} 2",
            "apiserver_request_duration_seconds_sum{component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 9",
            "apiserver_request_duration_seconds_count{component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 9");
    Map<RequestKey, RealApiServer.RequestTime> times = RealApiServer.parseRequestTimes(text);
    assertThat(times)
        .containsOnlyKeys(new RequestKey("list", "pods"), new RequestKey("create", "pods/binding"));
    assertThat(times.get(new RequestKey("list", "pods")))
        .isEqualTo(new RealApiServer.RequestTime(10, 1.0));
    assertThat(times.get(new RequestKey("list", "pods")).meanMillis()).isEqualTo(100.0);
    RealApiServer.RequestTime binding =
        times
            .get(new RequestKey("create", "pods/binding"))
            .minus(new RealApiServer.RequestTime(1, 0.004));
    assertThat(binding.count()).isEqualTo(1);
    assertThat(binding.seconds()).isCloseTo(0.006, org.assertj.core.data.Offset.offset(1e-9));
  }
}
