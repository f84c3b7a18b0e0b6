package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The examples README cannot drift from the program: it quotes the --help text and the run
 * commands.
 */
class ReadmeTest {
  private static final Path README =
      Path.of("../README.md"); // surefire runs in the module directory

  @Test
  void readmeQuotesTheCurrentHelpTextTheRunCommandAndTheRefusal() throws Exception {
    String readme = Files.readString(README);
    assertThat(readme).contains(ExtenderOptions.USAGE);
    assertThat(readme)
        .contains(
            "java -jar examples/extender/target/hami-extender.jar --kubeconfig ~/.kube/config --port 8888\n")
        .contains(
            "hami-extender: refusing to start: --node-lock-retry-timeout=30s must be below"
                + " --extender-http-timeout=30s (otherwise kube-scheduler abandons the bind while"
                + " the extender still waits)\n")
        .contains("urlPrefix: \"http://127.0.0.1:8888\"")
        .contains("nodeCacheCapable: true")
        .contains("httpTimeout: 30s");
  }
}
