package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockOwner;
import java.io.File;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolvedModule;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Issue 17 item 5: a scheduler that only wants the lock depends on hami-lock-k8s and gets core +
 * client-java, not the bind flow or the device model. Checked three ways: the module descriptor's
 * {@code requires}, the module graph resolved from this module's class path (what Maven's
 * dependency tree put there, test scope included), and the classes themselves being absent.
 */
class LockOnlyDependenciesTest {
  private static final Set<String> BIND_SIDE =
      Set.of(
          "dev.hamilock.bind",
          "dev.hamilock.device.spi",
          "dev.hamilock.device.nvidia",
          "dev.hamilock.k8s.bind");

  private static Path codeSource(Class<?> c) throws URISyntaxException {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  private static ModuleDescriptor descriptor(Path entry, String module) {
    return ModuleFinder.of(entry)
        .find(module)
        .orElseThrow(() -> new AssertionError("no module " + module + " in " + entry))
        .descriptor();
  }

  @Test
  void theModuleRequiresCoreAndClientJavaAndNothingOfTheBindSide() throws Exception {
    ModuleDescriptor k8s = descriptor(codeSource(KubernetesLockStack.class), "dev.hamilock.k8s");
    Set<String> requires =
        k8s.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toSet());
    assertThat(requires)
        .containsExactlyInAnyOrder(
            "java.base",
            "dev.hamilock.core",
            "io.kubernetes.client.java.api",
            "io.kubernetes.client.java",
            "com.google.gson",
            "okhttp3",
            "okio",
            "dev.failsafe.core");
    assertThat(k8s.exports())
        .noneMatch(
            e ->
                e.source().startsWith("dev.hamilock.k8s.bind")
                    || e.source().startsWith("dev.hamilock.k8s.view")
                    || e.source().startsWith("dev.hamilock.k8s.stack"));
    ModuleDescriptor core = descriptor(codeSource(LockOwner.class), "dev.hamilock.core");
    assertThat(core.requires())
        .extracting(ModuleDescriptor.Requires::name)
        .doesNotContainAnyElementsOf(BIND_SIDE);
  }

  @Test
  void theModuleGraphResolvedFromTheDependencyTreeHasNoBindOrDeviceModule() throws Exception {
    List<Path> entries =
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
            .map(Path::of)
            .filter(Files::exists)
            .toList();
    assertThat(entries)
        .as("Maven's dependency tree of hami-lock-k8s (compile, runtime and test scope)")
        .noneMatch(
            p ->
                p.toString().contains("hami-device-spi")
                    || p.toString().contains("hami-lock-bind")
                    || p.toString().contains("hami-device-nvidia")
                    || p.toString().contains("hami-lock-k8s-bind"));
    // resolve dev.hamilock.k8s the way the module path would: main classes of this module and core,
    // and the jars of the tree (automatic modules where they have no descriptor)
    List<Path> modulePath =
        entries.stream().filter(p -> p.toString().endsWith(".jar")).collect(Collectors.toList());
    modulePath.add(0, codeSource(LockOwner.class));
    modulePath.add(0, codeSource(KubernetesLockStack.class));
    Configuration graph =
        Configuration.resolve(
            ModuleFinder.of(modulePath.toArray(Path[]::new)),
            List.of(ModuleLayer.boot().configuration()),
            ModuleFinder.of(),
            Set.of("dev.hamilock.k8s"));
    Set<String> resolved =
        graph.modules().stream().map(ResolvedModule::name).collect(Collectors.toSet());
    assertThat(resolved)
        .contains("dev.hamilock.k8s", "dev.hamilock.core", "io.kubernetes.client.java.api")
        .doesNotContainAnyElementsOf(BIND_SIDE);
  }

  @Test
  void theBindFlowAndTheDeviceModelAreNotOnTheClassPath() {
    for (String type :
        List.of(
            "dev.hamilock.bind.PodBinder",
            "dev.hamilock.device.spi.DeviceVendor",
            "dev.hamilock.k8s.stack.KubernetesHamiStack")) {
      assertThatThrownBy(() -> Class.forName(type))
          .as(type)
          .isInstanceOf(ClassNotFoundException.class);
    }
  }
}
