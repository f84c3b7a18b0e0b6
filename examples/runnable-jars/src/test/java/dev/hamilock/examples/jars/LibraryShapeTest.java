package dev.hamilock.examples.jars;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Issue 27's shape limits on the library's main sources, parsed with the JDK's own compiler tree
 * API: no method or constructor over {@value #MAX_METHOD_LINES} lines (its first modifier to its
 * closing brace), {@code PodBinder} at most {@value #MAX_POD_BINDER_LINES} lines, the fabric8
 * adapter (both modules) at most {@value #MAX_FABRIC8_LINES} main lines.
 */
class LibraryShapeTest {

  static final int MAX_METHOD_LINES = 80;
  static final int MAX_POD_BINDER_LINES = 450;
  static final int MAX_FABRIC8_LINES = 1_500;

  static final List<String> LIBRARY =
      List.of(
          "hami-lock-core",
          "hami-device-spi",
          "hami-device-nvidia",
          "hami-lock-bind",
          "hami-lock-k8s",
          "hami-lock-k8s-bind",
          "hami-lock-fabric8",
          "hami-lock-fabric8-bind",
          "hami-lock-extender");

  static List<Path> mainSources(String module) throws IOException {
    try (Stream<Path> files = Files.walk(Jars.ROOT.resolve(module).resolve("src/main/java"))) {
      return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    }
  }

  /** Method or constructor (as {@code file:line name}) → its length in lines, over the library. */
  static Map<String, Integer> methodLengths() throws IOException {
    List<Path> sources = new ArrayList<>();
    for (String module : LIBRARY) {
      sources.addAll(mainSources(module));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    Map<String, Integer> lengths = new TreeMap<>();
    try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, null)) {
      JavacTask task =
          (JavacTask)
              javac.getTask(
                  null,
                  files,
                  null,
                  List.of("-proc:none"),
                  null,
                  files.getJavaFileObjectsFromPaths(sources));
      SourcePositions positions = Trees.instance(task).getSourcePositions();
      for (CompilationUnitTree unit : task.parse()) {
        LineMap lines = unit.getLineMap();
        String file = Jars.ROOT.relativize(Path.of(unit.getSourceFile().toUri())).toString();
        new TreePathScanner<Void, Void>() {
          @Override
          public Void visitMethod(MethodTree method, Void unused) {
            long start = lines.getLineNumber(positions.getStartPosition(unit, method));
            long end = lines.getLineNumber(positions.getEndPosition(unit, method));
            String owner =
                ((ClassTree) getCurrentPath().getParentPath().getLeaf()).getSimpleName().toString();
            lengths.put(
                file + ":" + start + " " + owner + "." + method.getName(), (int) (end - start + 1));
            return super.visitMethod(method, unused);
          }
        }.scan(unit, null);
      }
    }
    return lengths;
  }

  static long lines(Path file) throws IOException {
    try (Stream<String> s = Files.lines(file)) {
      return s.count();
    }
  }

  @Test
  void noLibraryMethodIsLongerThanEightyLines() throws IOException {
    Map<String, Integer> lengths = methodLengths();

    // the parse saw the library: thousands of methods, PodBinder's among them
    assertThat(lengths).hasSizeGreaterThan(1_000);
    assertThat(lengths.keySet()).anyMatch(m -> m.contains("PodBinder.java") && m.endsWith(".bind"));
    Map<String, Integer> tooLong = new TreeMap<>(lengths);
    tooLong.values().removeIf(length -> length <= MAX_METHOD_LINES);
    assertThat(tooLong)
        .as("library methods and constructors over %d lines", MAX_METHOD_LINES)
        .isEmpty();
  }

  @Test
  void podBinderAndTheFabric8AdapterStayWithinTheirSize() throws IOException {
    assertThat(
            lines(
                Jars.ROOT.resolve("hami-lock-bind/src/main/java/dev/hamilock/bind/PodBinder.java")))
        .isLessThanOrEqualTo(MAX_POD_BINDER_LINES);
    long fabric8 = 0;
    for (String module : List.of("hami-lock-fabric8", "hami-lock-fabric8-bind")) {
      for (Path file : mainSources(module)) {
        fabric8 += lines(file);
      }
    }
    assertThat(fabric8).isPositive().isLessThanOrEqualTo(MAX_FABRIC8_LINES);
  }
}
