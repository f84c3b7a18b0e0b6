package dev.hamilock.examples.gang;

import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.examples.gang.input.DemoInput;
import java.util.List;
import java.util.Optional;

/** The {@code --kubeconfig} run: binds against a real cluster. */
final class KubeconfigRun {
  private KubeconfigRun() {}

  static DemoResult run(DemoOptions options, VendorRegistry registry, RetryPolicy policy, DemoInput input,
      String summary, List<String> warnings) {
    return new DemoResult(GangDemo.EXIT_USER_ERROR, summary, warnings, List.of("--kubeconfig is not available yet"),
        Optional.empty(), Optional.empty(), List.of());
  }
}
