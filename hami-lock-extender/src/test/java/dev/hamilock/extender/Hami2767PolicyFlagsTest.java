package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HAMi#2767 / HAMi#2995: {@code --gpu-scheduler-policy=binpak} was accepted. An unknown flag value
 * refuses to start, naming the flag, the value and the accepted words; known values are trimmed.
 */
class Hami2767PolicyFlagsTest {

  @ParameterizedTest
  @ValueSource(strings = {"binpak", "Binpack", "", " ", "binpack,spreads", "random"})
  void anUnknownDevicePolicyRefusesToStart(String value) {
    assertThatThrownBy(() -> ExtenderConfig.parse(Map.of(), "--gpu-scheduler-policy=" + value))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("refusing to start")
        .hasMessageContaining("--gpu-scheduler-policy")
        .hasMessageContaining("\"" + value + "\"")
        .hasMessageContaining("binpack, spread, numa, mutex, topology-aware");
  }

  @ParameterizedTest
  @ValueSource(strings = {"Spread", "bin-pack", "binpack,spread", "numa"})
  void anUnknownNodePolicyRefusesToStart(String value) {
    assertThatThrownBy(() -> ExtenderConfig.parse(Map.of(), "--node-scheduler-policy", value))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("--node-scheduler-policy")
        .hasMessageContaining("\"" + value + "\"")
        .hasMessageContaining("one of binpack, spread");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "' binpack '|binpack",
        "'spread'|spread",
        "'binpack, numa'|'binpack, numa'",
        "'mutex,topology-aware'|mutex,topology-aware",
        "' topology-aware'|topology-aware"
      })
  void knownDevicePoliciesAreAcceptedTrimmed(String value, String stored) {
    assertThat(
            ExtenderConfig.parse(Map.of(), "--gpu-scheduler-policy=" + value)
                .schedulerFlags()
                .gpuSchedulerPolicy())
        .isEqualTo(stored);
    assertThat(
            ExtenderConfig.parse(Map.of(), "--node-scheduler-policy= spread ")
                .schedulerFlags()
                .nodeSchedulerPolicy())
        .isEqualTo("spread");
  }
}
