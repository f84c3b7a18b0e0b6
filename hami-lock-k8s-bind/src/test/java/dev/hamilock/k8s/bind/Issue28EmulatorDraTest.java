package dev.hamilock.k8s.bind;

import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;

/** {@link Issue28DraScenarios} on the emulator serving {@code resource.k8s.io/v1}. */
class Issue28EmulatorDraTest extends Issue28DraScenarios {
  @Override
  KubeBackend start() {
    return ApiServerEmulator.builder().servingDra(true).start();
  }
}
