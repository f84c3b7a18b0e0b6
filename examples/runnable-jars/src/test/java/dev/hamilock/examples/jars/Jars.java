package dev.hamilock.examples.jars;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Runs a runnable jar as a user does: {@code java -jar PATH ARGS} in its own process, from the
 * repository root (the directory every README command is written for), with the JDK running these
 * tests.
 */
final class Jars {
  /** The repository root: this module is {@code examples/runnable-jars}. */
  static final Path ROOT =
      Path.of(System.getProperty("basedir", System.getProperty("user.dir")))
          .resolve("../..")
          .toAbsolutePath()
          .normalize();

  static final String GANG_DEMO = "examples/gang-demo/target/gang-demo.jar";
  static final String EXTENDER = "examples/extender/target/hami-extender.jar";
  static final String PREFLIGHT = "tools/hami-lock-preflight/target/preflight.jar";
  static final String DOCTOR = "tools/hami-lock-doctor/target/hami-lock-doctor.jar";
  static final String BENCHMARKS = "tools/hami-lock-benchmarks/target/hami-lock-benchmarks.jar";

  /** The gang demo's built-in guide objects (real HAMi registrations, see nodes.yaml). */
  static final String GUIDE = "examples/gang-demo/src/main/resources/dev/hamilock/examples/gang/";

  private Jars() {}

  /** What a finished process printed and returned. */
  record Run(int exit, String out, String err) {
    String all() {
      return out + err;
    }
  }

  /**
   * Runs the jar to its end.
   *
   * @param limit a guard against a hung process (it is killed and the test fails), not a timing
   *     assertion
   */
  static Run run(Duration limit, String jar, String... args) {
    return run(limit, Map.of(), jar, args);
  }

  /**
   * Runs the jar to its end with its environment changed.
   *
   * @param env variables to set; an empty value removes the variable
   */
  static Run run(Duration limit, Map<String, String> env, String jar, String... args) {
    Process p = start(env, jar, args);
    try (InputStream out = p.getInputStream();
        InputStream err = p.getErrorStream()) {
      ByteArrayOutputStream o = new ByteArrayOutputStream();
      ByteArrayOutputStream e = new ByteArrayOutputStream();
      Thread drain = new Thread(() -> copy(err, e), "stderr of " + jar);
      drain.setDaemon(true);
      drain.start();
      copy(out, o);
      if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(
            "java -jar " + jar + " " + List.of(args) + " still ran after " + limit);
      }
      drain.join();
      return new Run(
          p.exitValue(), o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /** Starts the jar (the caller reads its streams and stops it). */
  static Process start(String jar, String... args) {
    return start(Map.of(), jar, args);
  }

  private static Process start(Map<String, String> env, String jar, String... args) {
    Path file = ROOT.resolve(jar);
    assertThat(file).as("%s: built by mvn package before this module's tests", jar).isRegularFile();
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.add("-jar");
    command.add(jar);
    command.addAll(List.of(args));
    try {
      ProcessBuilder builder = new ProcessBuilder(command).directory(ROOT.toFile());
      env.forEach(
          (k, v) -> {
            if (v.isEmpty()) {
              builder.environment().remove(k);
            } else {
              builder.environment().put(k, v);
            }
          });
      return builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void copy(InputStream in, ByteArrayOutputStream to) {
    try {
      in.transferTo(to);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Creates every document of a repository YAML file in the emulator. */
  static void seed(ApiServerEmulator k8s, String repoFile) throws IOException {
    Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
    for (Object doc : yaml.loadAll(Files.readString(ROOT.resolve(repoFile)))) {
      if (doc instanceof Map<?, ?> m) {
        if (m.get("metadata") instanceof Map<?, ?> meta
            && meta.get("namespace") instanceof String ns
            && k8s.get("namespaces", null, ns).isEmpty()) {
          k8s.createNamespace(ns);
        }
        k8s.create(m);
      }
    }
  }

  /** A kubeconfig file naming the emulator, as a user's. */
  static Path kubeconfig(ApiServerEmulator k8s, Path dir) throws IOException {
    return Files.writeString(dir.resolve("kubeconfig"), k8s.kubeconfig());
  }
}
