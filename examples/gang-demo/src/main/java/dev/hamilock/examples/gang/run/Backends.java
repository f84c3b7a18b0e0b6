package dev.hamilock.examples.gang.run;

import dev.hamilock.examples.gang.DemoOptions;

/** Creates the backend a run binds on. */
public final class Backends {
  private Backends() {}

  /**
   * @param options the options
   * @return a fresh backend for one run
   * @throws Exception if it cannot start
   */
  public static DemoBackend create(DemoOptions options) throws Exception {
    return new InMemoryBackend();
  }
}
