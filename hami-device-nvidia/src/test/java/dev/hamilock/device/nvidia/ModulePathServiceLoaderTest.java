package dev.hamilock.device.nvidia;

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
 * Module-path check: resolves the SPI jar and this module's compiled classes (which carry {@code
 * module-info.class} with {@code provides … with NvidiaVendor}) as named modules in a fresh {@link
 * ModuleLayer}, then lets the SPI's own {@code VendorRegistry.discover()} (which uses {@code uses
 * DeviceVendor}) find the vendor. The test-only vendor is on the class path only and must therefore
 * not be found there.
 */
class ModulePathServiceLoaderTest {
  private static final List<String> MODULE_JARS =
      List.of(
          "hami-device-spi",
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
  void vendorIsDiscoveredAsNamedModule() throws Exception {
    List<Path> paths = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Path.of(e);
      boolean mainClasses = p.endsWith(Path.of("hami-device-nvidia", "target", "classes"));
      String name = p.getFileName().toString();
      if (mainClasses || (name.endsWith(".jar") && MODULE_JARS.stream().anyMatch(name::contains))) {
        paths.add(p);
      }
    }
    assertThat(paths).anyMatch(p -> Files.exists(p.resolve("module-info.class")));
    ModuleFinder finder = ModuleFinder.of(paths.toArray(Path[]::new));
    ModuleLayer boot = ModuleLayer.boot();
    Configuration cf =
        boot.configuration()
            .resolveAndBind(finder, ModuleFinder.of(), Set.of("dev.hamilock.device.spi"));
    assertThat(cf.findModule("dev.hamilock.device.nvidia")).as("bound as provider").isPresent();
    ModuleLayer layer = boot.defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
    ClassLoader loader = layer.findLoader("dev.hamilock.device.spi");
    Class<?> registry = loader.loadClass("dev.hamilock.device.spi.VendorRegistry");
    assertThat(registry.getModule().isNamed()).isTrue();
    Object reg = registry.getMethod("discover").invoke(null);
    List<?> vendors = (List<?>) registry.getMethod("providers").invoke(reg);
    List<String> words = new ArrayList<>();
    for (Object v : vendors) {
      words.add(
          (String)
              loader
                  .loadClass("dev.hamilock.device.spi.DeviceVendor")
                  .getMethod("commonWord")
                  .invoke(v));
      assertThat(v.getClass().getModule().getName()).isEqualTo("dev.hamilock.device.nvidia");
    }
    assertThat(words).containsExactly("NVIDIA");
  }
}
