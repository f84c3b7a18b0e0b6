package com.example.npu;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.lang.module.Configuration;
import java.lang.module.ModuleFinder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The jar's {@code module-info} ({@code provides DeviceVendor with NpuVendor}) works: in a fresh
 * module layer holding the SPI, the NVIDIA vendor and this module, the SPI's own {@code
 * VendorRegistry.discover()} returns both vendors from their named modules.
 */
class ModulePathDiscoveryTest {
  private static final List<String> JARS =
      List.of(
          "hami-device-spi",
          "hami-device-nvidia",
          "guava",
          "failureaccess",
          "jackson-",
          "slf4j-api",
          "jspecify",
          "error_prone",
          "j2objc",
          "checker-qual",
          "listenablefuture");

  @Test
  void discoveredAsNamedModuleNextToNvidia() throws Exception {
    List<Path> paths = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Path.of(e);
      String name = p.getFileName().toString();
      if (p.endsWith(Path.of("custom-vendor", "target", "classes"))
          || (name.endsWith(".jar") && JARS.stream().anyMatch(name::contains))) {
        paths.add(p);
      }
    }
    assertThat(paths).anyMatch(p -> Files.exists(p.resolve("module-info.class")));
    Configuration cf =
        ModuleLayer.boot()
            .configuration()
            .resolveAndBind(
                ModuleFinder.of(paths.toArray(Path[]::new)),
                ModuleFinder.of(),
                Set.of("dev.hamilock.device.spi"));
    assertThat(cf.findModule("com.example.npu")).as("bound as a provider").isPresent();
    ModuleLayer layer =
        ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
    ClassLoader loader = layer.findLoader("dev.hamilock.device.spi");
    Class<?> registry = loader.loadClass("dev.hamilock.device.spi.VendorRegistry");
    Object reg = registry.getMethod("discover").invoke(null);
    List<String> found = new ArrayList<>();
    for (Object v : (List<?>) registry.getMethod("providers").invoke(reg)) {
      found.add(
          v.getClass().getModule().getName()
              + ":"
              + loader
                  .loadClass("dev.hamilock.device.spi.DeviceVendor")
                  .getMethod("commonWord")
                  .invoke(v));
    }
    assertThat(found)
        .containsExactlyInAnyOrder("com.example.npu:NPU", "dev.hamilock.device.nvidia:NVIDIA");
  }
}
