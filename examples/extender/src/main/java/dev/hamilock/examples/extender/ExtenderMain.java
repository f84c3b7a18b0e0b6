package dev.hamilock.examples.extender;

import dev.hamilock.core.GoDuration;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.extender.InvalidExtenderConfigException;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a HAMi-compatible kube-scheduler extender: {@code java -jar hami-extender.jar [flags]}.
 * Parses HAMi's flags ({@link ExtenderOptions}), refuses to start when {@code
 * --node-lock-retry-timeout} is not below {@code --extender-http-timeout} (exit 1, naming both
 * values), connects to the cluster ({@code --kubeconfig PATH}, else client-java's {@link
 * ClientBuilder#standard()}: {@code $KUBECONFIG}, {@code ~/.kube/config}, the in-cluster service
 * account), and serves {@link RunningExtender} until the process is stopped (SIGTERM, Ctrl-C).
 */
public final class ExtenderMain {
  /** Stopped normally (or {@code --help}). */
  public static final int EXIT_OK = 0;

  /** Bad flags, an unusable kubeconfig, or the listen address is taken: nothing was started. */
  public static final int EXIT_USER_ERROR = 1;

  /** An unexpected failure. */
  public static final int EXIT_INTERNAL_ERROR = 2;

  /** Where client-java's {@link ClientBuilder#standard()} points when it finds no configuration. */
  static final String CLIENT_JAVA_FALLBACK = "http://localhost:8080";

  /**
   * The port of {@link #CLIENT_JAVA_FALLBACK}: with it, the extender would be its own API server.
   */
  private static final int FALLBACK_PORT = URI.create(CLIENT_JAVA_FALLBACK).getPort();

  private ExtenderMain() {}

  /** What to do while the extender serves; returning stops it. */
  @FunctionalInterface
  public interface Serving {
    /**
     * @param extender the running extender
     * @throws Exception ends the run with {@link #EXIT_INTERNAL_ERROR} ({@link
     *     InterruptedException}: normal stop)
     */
    void serve(RunningExtender extender) throws Exception;
  }

  /**
   * The command: serves until the JVM shuts down (SIGTERM, Ctrl-C), then stops serving and exits
   * with {@link #EXIT_OK} (the JVM's own status would be 143 or 130); exits with a non-zero code if
   * it could not start.
   *
   * @param args the flags
   */
  public static void main(String[] args) {
    int code =
        run(
            List.of(args),
            System.out,
            System.err,
            running -> {
              Runtime.getRuntime()
                  .addShutdownHook(
                      new Thread(
                          () -> {
                            running.close(false); // the informers end with the JVM
                            Runtime.getRuntime().halt(EXIT_OK); // not 143 (SIGTERM) or 130
                          },
                          "hami-extender-shutdown"));
              new CountDownLatch(1).await(); // until the hook halts the JVM
            });
    if (code != EXIT_OK) {
      System.exit(code);
    }
  }

  /**
   * Parses, connects, starts, lets {@code serving} run, and stops.
   *
   * @param args the flags
   * @param out where the start line and {@code --help} go
   * @param err where errors go (one line naming the flag, file or address)
   * @param serving runs while the extender serves
   * @return {@link #EXIT_OK}, {@link #EXIT_USER_ERROR} or {@link #EXIT_INTERNAL_ERROR}
   */
  public static int run(List<String> args, PrintStream out, PrintStream err, Serving serving) {
    Objects.requireNonNull(args, "args");
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(err, "err");
    Objects.requireNonNull(serving, "serving");
    ExtenderOptions options;
    try {
      options = ExtenderOptions.parse(args);
    } catch (InvalidExtenderConfigException e) {
      err.println("hami-extender: " + e.getMessage());
      err.println("Run with --help for the flags.");
      return EXIT_USER_ERROR;
    }
    if (options.help()) {
      out.print(ExtenderOptions.USAGE);
      return EXIT_OK;
    }
    ApiClient client;
    try {
      client = apiClient(options.kubeconfig());
    } catch (IOException | RuntimeException e) {
      err.println(
          "hami-extender: cannot use "
              + options
                  .kubeconfig()
                  .map(p -> "--kubeconfig " + p)
                  .orElse("the standard kubeconfig or in-cluster configuration")
              + ": "
              + (e instanceof java.nio.file.NoSuchFileException ? "no such file " : "")
              + e.getMessage());
      return EXIT_USER_ERROR;
    }
    if (options.kubeconfig().isEmpty() && CLIENT_JAVA_FALLBACK.equals(client.getBasePath())) {
      if (options.config().port() == FALLBACK_PORT) {
        err.println(
            "hami-extender: no kubeconfig ($KUBECONFIG, ~/.kube/config) and no in-cluster service"
                + " account found, so client-java would use "
                + CLIENT_JAVA_FALLBACK
                + ", which is this extender's own --port "
                + FALLBACK_PORT
                + ": give --kubeconfig, or another --port (e.g. --port 8888 beside kubectl proxy"
                + " --port=8080)");
        return EXIT_USER_ERROR;
      }
      err.println(
          "hami-extender: warning: no kubeconfig ($KUBECONFIG, ~/.kube/config) and no in-cluster service"
              + " account found, so client-java uses "
              + CLIENT_JAVA_FALLBACK
              + " (e.g. kubectl proxy --port=8080);"
              + " /readyz answers 503 until the node watch has synced");
    }
    RunningExtender running;
    try {
      ApiClient watchClient = apiClient(options.kubeconfig());
      watchClient.setReadTimeout(0); // informer watches are long-lived
      running =
          RunningExtender.start(
              options.config(),
              client,
              watchClient,
              VendorRegistry.discover(),
              options.gpuPreemption());
    } catch (IOException e) {
      err.println(
          "hami-extender: cannot listen on "
              + options.config().bindAddress()
              + ":"
              + options.config().port()
              + ": "
              + (e instanceof java.nio.file.NoSuchFileException ? "no such file " : "")
              + e.getMessage());
      return EXIT_USER_ERROR;
    } catch (IllegalArgumentException e) {
      err.println("hami-extender: " + e.getMessage());
      return EXIT_USER_ERROR;
    } catch (RuntimeException e) {
      err.println("hami-extender: internal error while starting: " + e);
      return EXIT_INTERNAL_ERROR;
    }
    try (running) {
      String host = options.config().bindAddress();
      out.println(
          "hami-lock scheduler extender serving "
              + (options.config().serving().tls() ? "https" : "http")
              + "://"
              + (host.contains(":") ? "[" + host + "]" : host)
              + ":"
              + running.port()
              + " for the API server "
              + client.getBasePath()
              + " (node-lock-retry-timeout "
              + GoDuration.format(options.config().schedulerFlags().nodeLockRetryTimeout())
              + ", node-lock-timeout "
              + GoDuration.format(options.config().schedulerFlags().nodeLockTimeout())
              + ", extender-http-timeout "
              + GoDuration.format(options.config().schedulerFlags().extenderHttpTimeout())
              + ", lock keys "
              + running.hami().lockKeys()
              + (options.gpuPreemption() ? ", gpu-preemption on" : "")
              + ")");
      serving.serve(running);
      return EXIT_OK;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return EXIT_OK;
    } catch (Exception e) {
      err.println("hami-extender: internal error: " + e);
      return EXIT_INTERNAL_ERROR;
    }
  }

  /**
   * @param kubeconfig a kubeconfig file, or empty for {@link ClientBuilder#standard()}
   * @return the client
   * @throws IOException if the file cannot be read or names credentials that cannot be loaded
   */
  static ApiClient apiClient(Optional<Path> kubeconfig) throws IOException {
    if (kubeconfig.isEmpty()) {
      return ClientBuilder.standard().build();
    }
    Path path = kubeconfig.get();
    KubeConfig config;
    try (Reader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
      config = KubeConfig.loadKubeConfig(r);
    }
    if (config == null || config.getServer() == null) {
      throw new IOException("no server in the current context of " + path);
    }
    config.setFile(path.toAbsolutePath().toFile()); // relative certificate paths resolve next to it
    return ClientBuilder.kubeconfig(config).build();
  }
}
