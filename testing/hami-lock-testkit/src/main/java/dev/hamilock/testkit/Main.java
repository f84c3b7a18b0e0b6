package dev.hamilock.testkit;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;

/**
 * Runs an {@link ApiServerEmulator} as a standalone process so that kubectl or another program can
 * talk to it:
 *
 * <pre>
 * java -jar hami-lock-testkit-0.1.0-SNAPSHOT-all.jar --port 6443
 * </pre>
 *
 * <p>Prints the URL and a kubeconfig, then serves until the process is interrupted (Ctrl-C).
 * Options: {@code --port N} (default 6443; 0 for an ephemeral port), {@code --help}. Exit code 2
 * for bad arguments.
 */
public final class Main {
  private Main() {}

  /**
   * @param args command-line arguments, see the class comment
   * @throws InterruptedException if interrupted while serving
   */
  public static void main(String[] args) throws InterruptedException {
    int port = 6443;
    PrintStream out = System.out;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--port" -> {
          if (i + 1 >= args.length) {
            usage("--port needs a value");
            return;
          }
          try {
            port = Integer.parseInt(args[++i]);
          } catch (NumberFormatException e) {
            usage("--port value is not a number: " + args[i]);
            return;
          }
        }
        case "--help", "-h" -> {
          out.println("usage: java -jar hami-lock-testkit-all.jar [--port N]");
          return;
        }
        default -> {
          usage("unknown argument: " + args[i]);
          return;
        }
      }
    }
    ApiServerEmulator emulator;
    try {
      emulator = ApiServerEmulator.start(port);
    } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
      System.err.println("cannot start: " + e.getMessage());
      System.exit(1);
      return;
    }
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  emulator.close();
                  stop.countDown();
                },
                "hami-testkit-shutdown"));
    out.println("hami-lock Kubernetes API emulator listening on " + emulator.url());
    out.println("# kubeconfig (save to a file and use: kubectl --kubeconfig FILE get nodes)");
    out.print(emulator.kubeconfig());
    out.flush();
    stop.await();
  }

  private static void usage(String problem) {
    System.err.println(problem);
    System.err.println("usage: java -jar hami-lock-testkit-all.jar [--port N]");
    System.exit(2);
  }
}
