package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.InvalidQuantityException;
import dev.hamilock.device.spi.view.Quantities;
import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QuantitiesTest {
  @ParameterizedTest
  @CsvSource({
    "3000, 3000",
    "16Gi, 17179869184",
    "1.5, 1.5",
    "500m, 0.5",
    "8Ki, 8192",
    "1e3, 1000",
    "16.0Gi, 17179869184",
    "1Gi, 1073741824",
    "+2, 2",
    "-1, -1",
    "4294967346, 4294967346",
    "2k, 2000",
    "1E-3, 0.001",
    ".5, 0.5",
    "5., 5",
    "0, 0"
  })
  void parsesExactly(String text, String expected) throws Exception {
    assertThat(Quantities.parse(text)).isEqualByComparingTo(new BigDecimal(expected));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "abc", "1.2.3", "16GB", "1e", "1e1000", " 1", "1 ", "Gi", "--1", "1x"})
  void rejectsWithTypedErrorNamingValue(String text) {
    assertThatThrownBy(() -> Quantities.parse(text))
        .isInstanceOf(InvalidQuantityException.class)
        .hasMessageContaining("\"" + text + "\"");
  }

  @Test
  void integerCheck() throws Exception {
    assertThat(Quantities.isInteger(Quantities.parse("16.0Gi"))).isTrue();
    assertThat(Quantities.isInteger(Quantities.parse("1.5"))).isFalse();
    assertThat(Quantities.isInteger(Quantities.parse("500m"))).isFalse();
    assertThat(Quantities.isInteger(Quantities.parse("1000m"))).isTrue();
  }

  @Test
  void containerViewNamesContainerAndResource() {
    assertThatThrownBy(
            () ->
                ContainerView.ofQuantities(
                    "worker", "img", Map.of("nvidia.com/gpumem", "lots"), Map.of()))
        .isInstanceOf(InvalidQuantityException.class)
        .hasMessageContaining("worker")
        .hasMessageContaining("nvidia.com/gpumem")
        .hasMessageContaining("lots");
  }
}
