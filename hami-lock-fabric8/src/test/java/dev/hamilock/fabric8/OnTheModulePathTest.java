package dev.hamilock.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.TestNode;
import java.io.File;
import java.lang.module.Configuration;
import java.lang.module.ModuleFinder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Module-path check (tests run on the class path, as in hami-device-nvidia's {@code
 * ModulePathServiceLoaderTest}): resolves this module's classes, core and fabric8 8.0.0's jars
 * (automatic modules, with the JDK HTTP client) as modules of a fresh {@link ModuleLayer}, builds a
 * fabric8 client there and writes the lock through this module's store, so the request really goes
 * through named {@code dev.hamilock.fabric8} and automatic {@code kubernetes.client.api}. With
 * fabric8's Vert.x 5 client, building the client failed on the module path ({@code
 * IllegalAccessError}, README).
 */
class OnTheModulePathTest {

  private static final List<String> MODULE_JARS =
      List.of(
          "kubernetes-",
          "failsafe-",
          "zjsonpatch",
          "jackson-core-3",
          "jackson-databind-3",
          "jackson-dataformat-yaml-3",
          "jackson-annotations-",
          "snakeyaml-engine",
          "slf4j-api",
          "slf4j-simple");

  @Test
  void theStoreWritesTheLockThroughNamedModules() throws Exception {
    List<Path> paths = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Path.of(e);
      String name = p.getFileName().toString();
      boolean classes =
          p.endsWith(Path.of("hami-lock-fabric8", "target", "classes"))
              || p.endsWith(Path.of("hami-lock-core", "target", "classes"));
      if (classes
          || name.startsWith("hami-lock-core-")
          || (name.endsWith(".jar") && MODULE_JARS.stream().anyMatch(name::startsWith))) {
        paths.add(p);
      }
    }
    assertThat(paths).anyMatch(p -> Files.exists(p.resolve("module-info.class")));
    ModuleFinder finder = ModuleFinder.of(paths.toArray(Path[]::new));
    // every module as a root, as --add-modules ALL-MODULE-PATH: fabric8's automatic modules
    // cannot require Jackson 3's named modules, so nothing else would resolve them
    Set<String> roots = new HashSet<>();
    finder.findAll().forEach(m -> roots.add(m.descriptor().name()));
    assertThat(roots).contains("dev.hamilock.fabric8", "kubernetes.client.api");
    ModuleLayer boot = ModuleLayer.boot();
    Configuration cf = boot.configuration().resolveAndBind(finder, ModuleFinder.of(), roots);
    ModuleLayer layer = boot.defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
    ClassLoader loader = layer.findLoader("dev.hamilock.fabric8");

    // fabric8 also looks up its model classes through the context class loader: the layer's, as
    // in a program on the module path (here the class path holds the same jars as well)
    Thread thread = Thread.currentThread();
    ClassLoader before = thread.getContextClassLoader();
    thread.setContextClassLoader(loader);
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      k8s.createNode(TestNode.named("n1"));
      Class<?> configClass = loader.loadClass("io.fabric8.kubernetes.client.Config");
      Object config =
          configClass.getMethod("fromKubeconfig", String.class).invoke(null, k8s.kubeconfig());
      Class<?> builderClass =
          loader.loadClass("io.fabric8.kubernetes.client.KubernetesClientBuilder");
      Object builder = builderClass.getConstructor().newInstance();
      builderClass.getMethod("withConfig", configClass).invoke(builder, config);
      Object client = builderClass.getMethod("build").invoke(builder);
      try {
        Class<?> clientClass = loader.loadClass("io.fabric8.kubernetes.client.KubernetesClient");
        Object http = clientClass.getMethod("getHttpClient").invoke(client);
        assertThat(http.getClass().getModule().getName())
            .isEqualTo("io.fabric8.kubernetes.client.jdkhttp");
        Class<?> store = loader.loadClass("dev.hamilock.fabric8.Fabric8LockStore");
        assertThat(store.getModule().getName()).isEqualTo("dev.hamilock.fabric8");
        Object storeBuilder = store.getMethod("builder", clientClass).invoke(null, client);
        Object lockStore = storeBuilder.getClass().getMethod("build").invoke(storeBuilder);
        Object result =
            lockStore
                .getClass()
                .getMethod("createIfAbsent", String.class, String.class, String.class)
                .invoke(lockStore, "n1", "hami.io/mutex.lock", "v1");
        assertThat(result.getClass().getMethod("isWritten").invoke(result)).isEqualTo(true);
      } finally {
        ((AutoCloseable) client).close();
      }
      assertThat(k8s.get("nodes", null, "n1").orElseThrow().at("/metadata/annotations").toString())
          .contains("\"hami.io/mutex.lock\":\"v1\"");
    } finally {
      thread.setContextClassLoader(before);
    }
  }
}
