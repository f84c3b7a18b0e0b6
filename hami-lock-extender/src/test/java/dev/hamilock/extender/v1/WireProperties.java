package dev.hamilock.extender.v1;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** decode(encode(x)) == x for arbitrary wire values, including characters Go escapes. */
class WireProperties {

  @Provide
  Arbitrary<String> texts() {
    return Arbitraries.strings().withCharRange(' ', '~')
        .withChars('\n', '\t', '\u0001', '\u2028', '\u2029', '\u00e9', '\u4e2d')
        .ofMaxLength(30);
  }

  @Property(tries = 200)
  void bindingArgsRoundTrip(@ForAll("texts") String name, @ForAll("texts") String ns,
      @ForAll("texts") String uid, @ForAll("texts") String node) throws Exception {
    ExtenderBindingArgs a = new ExtenderBindingArgs(name, ns, uid, node);
    String wire = ExtenderJson.encode(a);
    assertThat(ExtenderJson.decodeBindingArgs(wire.getBytes(StandardCharsets.UTF_8))).isEqualTo(a);
    assertThat(wire).doesNotContain("<", ">", "&");
  }

  @Property(tries = 200)
  void filterResultsRoundTrip(
      @ForAll("names") Optional<List<String>> names,
      @ForAll("failures") Optional<Map<String, String>> failed,
      @ForAll("failures") Optional<Map<String, String>> unresolvable,
      @ForAll("texts") String error) throws Exception {
    ExtenderFilterResult r = new ExtenderFilterResult(Optional.empty(), names, failed, unresolvable, error);
    ExtenderFilterResult back = ExtenderJson.decodeFilterResult(
        ExtenderJson.encode(r).getBytes(StandardCharsets.UTF_8));
    assertThat(back).isEqualTo(r);
  }

  @Provide
  Arbitrary<Optional<List<String>>> names() {
    return texts().list().ofMaxSize(5).optional();
  }

  @Provide
  Arbitrary<Optional<Map<String, String>>> failures() {
    return Arbitraries.maps(texts(), texts()).ofMaxSize(5).optional();
  }
}
