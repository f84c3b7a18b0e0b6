package dev.hamilock.examples.gang.run;

import dev.hamilock.device.spi.VendorRegistry;

/** Creates the backend a run binds on. */
public final class Backends {
  private Backends() {}

  /**
   * @param inMemory the in-process cluster instead of the API emulator
   * @param registry the vendors
   * @return a fresh backend for one run
   */
  public static DemoBackend create(boolean inMemory, VendorRegistry registry) {
    return inMemory ? new InMemoryBackend() : new EmulatorBackend(registry);
  }
}
