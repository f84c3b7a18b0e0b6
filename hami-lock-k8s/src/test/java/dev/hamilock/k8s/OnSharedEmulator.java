package dev.hamilock.k8s;

import dev.hamilock.testkit.ApiServerEmulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Base of test classes that share one {@link ApiServerEmulator} per class: started before the
 * class's first test, closed after its last. Test classes run one after another (no JUnit parallel
 * execution is configured), so the static fields belong to the running class.
 */
abstract class OnSharedEmulator {
  /** The running class's emulator. */
  static ApiServerEmulator k8s;

  /** Object helpers on {@link #k8s}. */
  static Cluster cluster;

  @BeforeAll
  static void startEmulator() {
    k8s = ApiServerEmulator.start();
    cluster = new Cluster(k8s);
  }

  @AfterAll
  static void stopEmulator() {
    k8s.close();
  }
}
