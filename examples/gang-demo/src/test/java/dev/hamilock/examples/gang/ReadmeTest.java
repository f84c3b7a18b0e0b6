package dev.hamilock.examples.gang;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The module README cannot drift from the program: it quotes the --help text and the run command.
 */
class ReadmeTest {
  private static final Path README = Path.of("README.md"); // surefire runs in the module directory

  @Test
  void readmeQuotesTheCurrentHelpTextAndTheRunCommand() throws Exception {
    String readme = Files.readString(README);
    assertThat(readme).contains(DemoOptions.USAGE);
    assertThat(readme)
        .contains(
            "mvn -B -q -DskipTests package && java -jar examples/gang-demo/target/gang-demo.jar\n");
  }

  @Test
  void everyPitfallFixtureTheReadmeNamesExists() throws Exception {
    String readme = Files.readString(README);
    assertThat(readme).contains("pitfalls/annotation-instead-of-label.yaml");
    assertThat(Path.of("src/test/resources/pitfalls/annotation-instead-of-label.yaml")).exists();
  }
}
