package dev.hamilock.examples.modulepath;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link Main} run as a named module in a fresh JVM, exactly as a user would start it: {@code java
 * --module-path <runtime dependencies> -m dev.hamilock.examples.modulepath/...} with no {@code
 * --add-modules}, {@code --add-exports} or {@code --add-opens}. The boot layer then holds only what
 * the modules' {@code requires} pull in, so a missing {@code requires jdk.httpserver} in the
 * testkit or a client-java call into a non-exported OkHttp package fails here (before the fixes:
 * {@code NoClassDefFoundError: com/sun/net/httpserver/HttpHandler} and {@code IllegalAccessError}
 * on {@code okhttp3.internal.http.HttpMethod}).
 */
class ModulePathTest {

  @Test
  void runsOnTheModulePathWithoutFlagsMakingRealApiCalls() throws Exception {
    List<String> modulePath = new ArrayList<>();
    modulePath.add(Path.of("target", "classes").toAbsolutePath().toString());
    String runtime = Files.readString(Path.of("target", "runtime-path.txt")).strip();
    modulePath.addAll(List.of(runtime.split(File.pathSeparator)));
    assertThat(modulePath)
        .anyMatch(p -> p.contains("hami-lock-testkit"))
        .anyMatch(p -> p.contains("okhttp"));

    Path out = Files.createTempFile("module-path-out", ".txt");
    Path err = Files.createTempFile("module-path-err", ".txt");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p =
        new ProcessBuilder(
                java,
                "--module-path",
                String.join(File.pathSeparator, modulePath),
                "-m",
                "dev.hamilock.examples.modulepath/dev.hamilock.examples.modulepath.Main")
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    boolean ended = p.waitFor(120, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly();
    }
    String stdout = Files.readString(out, StandardCharsets.UTF_8);
    String stderr = Files.readString(err, StandardCharsets.UTF_8);
    assertThat(ended).as("ended; stdout:%n%s%nstderr:%n%s", stdout, stderr).isTrue();
    assertThat(p.exitValue()).as("exit code; stdout:%n%s%nstderr:%n%s", stdout, stderr).isZero();
    assertThat(stdout.lines().toList())
        .containsExactly(
            "ok   named modules",
            "ok   lock watch synced (list + watch)",
            "ok   lock acquired (PATCH)",
            "ok   watch event: lock seen",
            "ok   lock released (PATCH)",
            "ok   watch event: release seen",
            "ok   filter chose gpu-node-a",
            "ok   bind BOUND",
            "ok   device plugin hand-off COMPLETED",
            "module path: all steps passed");
    assertThat(stderr)
        .as("no stack trace of a dying thread")
        .doesNotContain("Exception", "Error", "\tat ");
  }
}
