package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runnable jar as a user runs it ({@code java -jar target/hami-extender.jar}, its own process),
 * after {@code package}: run by the {@code jar-tests} surefire execution of this module's POM in
 * the {@code integration-test} phase (the {@code *IT} classes; the unit-test run skips them).
 */
class ExtenderJarIT {
  private static final Path JAR = Path.of("target", "hami-extender.jar");

  @TempDir Path tmp;

  /**
   * Issue 24 item 5: started with no reachable cluster, the extender printed a full stack trace for
   * every failed list of its informers (48 in 25 s). For 10 s against a port nobody listens on it
   * now prints one line per resource and no stack trace.
   */
  @Test
  void anUnreachableClusterGivesOneLinePerResourceAndNoStackTrace() throws Exception {
    assertThat(JAR).as("built by package").isRegularFile();
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort(); // free once closed: connections are refused
    }
    Path kubeconfig = tmp.resolve("kubeconfig");
    Files.writeString(
        kubeconfig,
        """
        apiVersion: v1
        kind: Config
        clusters:
        - name: nowhere
          cluster: {server: "http://127.0.0.1:%d"}
        contexts:
        - name: nowhere
          context: {cluster: nowhere, user: nobody}
        current-context: nowhere
        users:
        - name: nobody
          user: {token: not-a-token}
        """
            .formatted(closedPort));
    Path log = tmp.resolve("extender.log");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                JAR.toString(),
                "--kubeconfig",
                kubeconfig.toString(),
                "--port=0")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      assertThat(p.waitFor(10, TimeUnit.SECONDS)).as("still serving after 10 s").isFalse();
    } finally {
      p.destroy(); // SIGTERM: the shutdown hook stops it
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
    String all = Files.readString(log);
    // up to the shutdown hook (SIGTERM): client-java's informers log their own interrupted stop
    int stopped = all.indexOf("[hami-extender-shutdown]");
    assertThat(stopped).as(all).isPositive();
    String out = all.substring(0, stopped);
    List<String> lines = out.lines().toList();
    assertThat(out)
        .as(out)
        .contains("serving http://127.0.0.1:")
        .contains("cannot list and watch nodes at http://127.0.0.1:" + closedPort)
        .contains("cannot list and watch pods at http://127.0.0.1:" + closedPort)
        .doesNotContain("Caused by:")
        .doesNotContain("Reflector loop failed")
        .doesNotContainPattern("(?m)^\\s+at [\\w$.]+\\(");
    assertThat(lines.stream().filter(l -> l.contains("cannot list and watch"))).as(out).hasSize(2);
    assertThat(lines).as(out).hasSizeLessThanOrEqualTo(20);
  }
}
