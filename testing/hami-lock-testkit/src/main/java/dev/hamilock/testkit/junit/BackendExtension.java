package dev.hamilock.testkit.junit;

import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.RealApiServer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

/**
 * Runs each {@link BackendTest} method once per selected {@link KubeBackend.Kind}, resolving a
 * {@link KubeBackend} parameter. The emulator lives as long as the test class, the real server as
 * long as the test run (JUnit's root store closes it, which also checks its temporary directory is
 * gone).
 */
// exports: JUnit is an optional (requires static) dependency, present wherever this is used;
// a transitive requires would force it on every user of the module
@SuppressWarnings("exports")
public final class BackendExtension implements TestTemplateInvocationContextProvider {
  /**
   * System property selecting the backends: comma list of {@code emulator}, {@code real-apiserver}.
   */
  public static final String BACKENDS_PROPERTY = "hamilock.backends";

  /** Tag of every {@link BackendTest} method. */
  public static final String TAG = "backends";

  private static final ExtensionContext.Namespace NS =
      ExtensionContext.Namespace.create(BackendExtension.class);

  /**
   * @return the selected backends, in the order given
   * @throws ExtensionConfigurationException for an unknown name or an empty list
   */
  public static List<KubeBackend.Kind> selected() {
    String value = System.getProperty(BACKENDS_PROPERTY, KubeBackend.Kind.EMULATOR.label());
    List<KubeBackend.Kind> out = new ArrayList<>();
    for (String s : value.split(",")) {
      String name = s.trim().toLowerCase(Locale.ROOT);
      if (name.isEmpty()) {
        continue;
      }
      KubeBackend.Kind k =
          Arrays.stream(KubeBackend.Kind.values())
              .filter(x -> x.label().equals(name))
              .findFirst()
              .orElseThrow(
                  () ->
                      new ExtensionConfigurationException(
                          "-D"
                              + BACKENDS_PROPERTY
                              + "="
                              + value
                              + ": unknown backend \""
                              + name
                              + "\"; use a comma list of emulator, real-apiserver"));
      if (!out.contains(k)) {
        out.add(k);
      }
    }
    if (out.isEmpty()) {
      throw new ExtensionConfigurationException(
          "-D"
              + BACKENDS_PROPERTY
              + "=\""
              + value
              + "\" selects no backend; use a comma list of emulator, real-apiserver");
    }
    return out;
  }

  @Override
  public boolean supportsTestTemplate(ExtensionContext context) {
    return context.getTestMethod().map(m -> m.isAnnotationPresent(BackendTest.class)).orElse(false);
  }

  @Override
  public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(
      ExtensionContext context) {
    return selected().stream().map(kind -> new Invocation(kind, () -> backend(kind, context)));
  }

  /** A started backend or the failure to start it (kept, so every invocation reports it). */
  private static final class Holder implements AutoCloseable {
    private final KubeBackend backend;
    private final RuntimeException failure;

    Holder(Supplier<KubeBackend> start) {
      KubeBackend b = null;
      RuntimeException f = null;
      try {
        b = start.get();
      } catch (RuntimeException e) {
        f = e;
      }
      backend = b;
      failure = f;
    }

    KubeBackend get() {
      if (failure != null) {
        throw failure;
      }
      return backend;
    }

    @Override
    public void close() {
      if (backend != null) {
        backend.close();
      }
    }
  }

  /**
   * The shared backend of a kind, started on first use: the emulator per test class, the real
   * server per test run (for tests that need a backend beyond the {@link BackendTest} template,
   * e.g. the real server next to their own emulators).
   *
   * @param context the test's extension context
   * @throws RuntimeException the backend's start failure (the same one for every caller)
   */
  public static KubeBackend backend(KubeBackend.Kind kind, ExtensionContext context) {
    return switch (kind) {
      case EMULATOR ->
          context
              .getParent()
              .orElse(context)
              .getStore(NS)
              .getOrComputeIfAbsent(
                  "emulator", k -> new Holder(ApiServerEmulator::start), Holder.class)
              .get();
      case REAL ->
          context
              .getRoot()
              .getStore(NS)
              .getOrComputeIfAbsent("real", k -> new Holder(RealApiServer::start), Holder.class)
              .get();
    };
  }

  private record Invocation(KubeBackend.Kind kind, Supplier<KubeBackend> backend)
      implements TestTemplateInvocationContext {
    @Override
    public String getDisplayName(int invocationIndex) {
      return "[" + kind.label() + "]";
    }

    @Override
    public List<Extension> getAdditionalExtensions() {
      return List.of(
          new ParameterResolver() {
            @Override
            public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
              return p.getParameter().getType() == KubeBackend.class;
            }

            @Override
            public Object resolveParameter(ParameterContext p, ExtensionContext e) {
              return backend.get();
            }
          });
    }
  }
}
