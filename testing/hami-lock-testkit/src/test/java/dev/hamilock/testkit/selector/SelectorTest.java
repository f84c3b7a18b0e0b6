package dev.hamilock.testkit.selector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SelectorTest {
  private static final Map<String, String> L =
      Map.of("gpu", "true", "zone", "a", "n", "5", "hami.io/vgpu", "on");

  private static boolean sel(String s) throws SelectorParseException {
    return LabelSelector.parse(s).matches(L);
  }

  @Test
  void labelSelectorOperators() throws Exception {
    assertThat(sel("gpu=true")).isTrue();
    assertThat(sel("gpu==false")).isFalse();
    assertThat(sel("gpu!=false,zone in (a, b)")).isTrue();
    assertThat(sel("zone notin (a)")).isFalse();
    assertThat(sel("missing notin (a)")).isTrue();
    assertThat(sel("hami.io/vgpu")).isTrue();
    assertThat(sel("!hami.io/vgpu")).isFalse();
    assertThat(sel("n>4,n<6")).isTrue();
    assertThat(sel("n>5")).isFalse();
    assertThat(sel("")).isTrue();
  }

  @Test
  void labelSelectorErrorsNameTheProblem() {
    assertThatThrownBy(() -> LabelSelector.parse("a in (b"))
        .isInstanceOf(SelectorParseException.class);
    assertThatThrownBy(() -> LabelSelector.parse("-a"))
        .isInstanceOf(SelectorParseException.class)
        .hasMessageContaining("-a");
    assertThatThrownBy(() -> LabelSelector.parse("a=b c"))
        .isInstanceOf(SelectorParseException.class);
    assertThatThrownBy(() -> LabelSelector.parse("n>x"))
        .isInstanceOf(SelectorParseException.class)
        .hasMessageContaining("integer");
  }

  @Test
  void fieldSelectorTermsAndEscapes() throws Exception {
    Map<String, String> f = Map.of("metadata.name", "a,b", "spec.nodeName", "n1");
    assertThat(FieldSelector.parse("metadata.name=a\\,b").matches(f)).isTrue();
    assertThat(FieldSelector.parse("spec.nodeName!=n1").matches(f)).isFalse();
    assertThat(FieldSelector.parse("spec.nodeName==n1,metadata.name!=x").matches(f)).isTrue();
    assertThat(FieldSelector.parse("status.phase=").matches(f::get)).isTrue();
    assertThatThrownBy(() -> FieldSelector.parse("nonsense"))
        .isInstanceOf(SelectorParseException.class)
        .hasMessageContaining("nonsense");
  }
}
