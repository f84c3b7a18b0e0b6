package dev.hamilock.extender.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.maps;

import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/** decode(encode(x)) == x for arbitrary wire values, including characters Go escapes. */
class WireProperties {

  /**
   * Printable ASCII and characters Go's encoder escapes (control, U+2028/9) or passes (é, 中), 0–30
   * long.
   */
  static Gen<String> texts() {
    return Gens.strings(Gens.range(' ', '~') + "\n\t\u0001\u2028\u2029\u00e9\u4e2d", 0, 30);
  }

  @Test
  void bindingArgsRoundTrip() {
    Props.qt(200)
        .forAll(texts(), texts(), texts(), texts())
        .checkAssert(
            (name, ns, uid, node) ->
                Props.unchecked(
                    () -> {
                      ExtenderBindingArgs a = new ExtenderBindingArgs(name, ns, uid, node);
                      String wire = ExtenderJson.encode(a);
                      assertThat(
                              ExtenderJson.decodeBindingArgs(wire.getBytes(StandardCharsets.UTF_8)))
                          .isEqualTo(a);
                      assertThat(wire).doesNotContain("<", ">", "&");
                    }));
  }

  @Test
  void filterResultsRoundTrip() {
    Props.qt(200)
        .forAll(names(), failures(), failures(), texts())
        .checkAssert(
            (names, failed, unresolvable, error) ->
                Props.unchecked(
                    () -> {
                      ExtenderFilterResult r =
                          new ExtenderFilterResult(
                              Optional.empty(), names, failed, unresolvable, error);
                      ExtenderFilterResult back =
                          ExtenderJson.decodeFilterResult(
                              ExtenderJson.encode(r).getBytes(StandardCharsets.UTF_8));
                      assertThat(back).isEqualTo(r);
                    }));
  }

  /** 0–5 texts; absent one time in twenty. */
  static Gen<Optional<List<String>>> names() {
    return lists().of(texts()).ofSizeBetween(0, 5).toOptionals(5);
  }

  /** 0–5 text-to-text entries; absent one time in twenty. */
  static Gen<Optional<Map<String, String>>> failures() {
    return maps().of(texts(), texts()).ofSizeBetween(0, 5).toOptionals(5);
  }
}
