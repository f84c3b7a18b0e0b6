package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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

  /** The cap of every wait: generous, the jar took 11-12 s to serve at a load average of 24. */
  private static final Duration CAP = Duration.ofSeconds(60);

  private static final String STACK_FRAME = "(?m)^\\s+at [\\w$.]+\\(";

  private int closedPort;

  @TempDir Path tmp;

  /**
   * Issue 24 item 5: started with no reachable cluster, the extender printed a full stack trace for
   * every failed list of its informers (48 in 25 s). Against a port nobody listens on it now prints
   * one line per resource and no stack trace, up to its stop (SIGTERM once both lines and the
   * serving line are out: under load the jar needed 11-12 s to serve, so a fixed 10 s missed them).
   */
  @Test
  void anUnreachableClusterGivesOneLinePerResourceAndNoStackTrace() throws Exception {
    String all =
        runAndStop(
                List.of(
                    "serving http://127.0.0.1:",
                    "cannot list and watch nodes",
                    "cannot list and watch pods"))
            .output();
    // up to the shutdown hook (SIGTERM)
    int stopped = all.indexOf("[hami-extender-shutdown]");
    assertThat(stopped).as(all).isPositive();
    String out = all.substring(0, stopped);
    List<String> lines = out.lines().toList();
    assertThat(out)
        .as(out)
        .contains("cannot list and watch nodes at http://127.0.0.1:" + closedPort)
        .contains("cannot list and watch pods at http://127.0.0.1:" + closedPort)
        .doesNotContain("Caused by:")
        .doesNotContain("Reflector loop failed")
        .doesNotContainPattern(STACK_FRAME);
    assertThat(lines.stream().filter(l -> l.contains("cannot list and watch"))).as(out).hasSize(2);
    assertThat(lines).as(out).hasSizeLessThanOrEqualTo(20);
  }

  /**
   * A stop with SIGTERM, as examples/README.md tells users to stop it ("0 stopped normally"),
   * printed client-java's {@code ERROR ... Controller - DefaultController#processLoop get
   * interrupted} with an InterruptedException stack trace for each informer, and the JVM's status
   * 143. It now stops serving and exits 0 with no ERROR line and no stack trace.
   */
  @Test
  void aSigtermStopPrintsNoErrorOrStackTraceAndExitsZero() throws Exception {
    Stopped s = runAndStop(List.of("serving http://127.0.0.1:"));
    assertThat(s.output())
        .as(s.output())
        .contains("[hami-extender-shutdown]")
        .doesNotContain("ERROR")
        .doesNotContainPattern(STACK_FRAME);
    assertThat(s.exitCode()).as(s.output()).isZero();
  }

  private record Stopped(String output, int exitCode) {}

  /**
   * Runs the jar against a server that refuses connections, waits (at most 60 s, then fails) until
   * its output holds every one of {@code awaited}, sends SIGTERM and waits (at most 60 s) for it to
   * end.
   */
  private Stopped runAndStop(List<String> awaited) throws Exception {
    assertThat(JAR).as("built by package").isRegularFile();
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
      long deadline = System.nanoTime() + CAP.toNanos();
      String out = Files.readString(log);
      while (!awaited.stream().allMatch(out::contains)
          && p.isAlive()
          && System.nanoTime() - deadline < 0) {
        Thread.sleep(100);
        out = Files.readString(log);
      }
      assertThat(p.isAlive()).as("still serving: " + out).isTrue();
      assertThat(out).as("within %s", CAP).contains(awaited);
      p.destroy(); // SIGTERM: the shutdown hook stops it
      assertThat(p.waitFor(CAP.toSeconds(), TimeUnit.SECONDS)).as("stopped").isTrue();
      return new Stopped(Files.readString(log), p.exitValue());
    } finally {
      p.destroyForcibly();
    }
  }
}
