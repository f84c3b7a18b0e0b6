package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.codec.CachingRegistrationDecoder;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.codec.PairScoreCodec;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.MigPlacement;
import dev.hamilock.device.spi.model.MigProfile;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Vectors V34-V41 and fixtures F-01..F-08, F-17..F-21, F-60..F-62. */
class NodeRegistrationCodecTest {
  static final String P4 = "GPU-ebe7c3f7-303d-558d-435e-99a160631fe4";

  /** HAMi's EncodeNodeDevices (V37): 9 fields per device, each followed by {@code :}. */
  static String encodeColon(List<DeviceInfo> devices) {
    StringBuilder b = new StringBuilder();
    for (DeviceInfo d : devices) {
      b.append(
          String.join(
              ",",
              d.id(),
              String.valueOf(d.count()),
              String.valueOf(d.devmem()),
              String.valueOf(d.devcore()),
              d.type(),
              String.valueOf(d.numa()),
              String.valueOf(d.health()),
              String.valueOf(d.index()),
              d.mode()));
      b.append(':');
    }
    return b.toString();
  }

  static DeviceInfo dev(
      String id,
      int index,
      int count,
      int mem,
      int core,
      String type,
      int numa,
      String mode,
      boolean health) {
    return new DeviceInfo(
        id, index, count, mem, core, type, numa, mode, List.of(), health, "NVIDIA");
  }

  @Test
  void v34_legacySevenFields() throws Exception {
    assertThat(NodeRegistrationCodec.decode(P4 + ",10,7680,100,NVIDIA-Tesla P4,0,true:", "NVIDIA"))
        .containsExactly(dev(P4, 0, 10, 7680, 100, "NVIDIA-Tesla P4", 0, "hami-core", true));
  }

  @Test
  void v35_nineFields() throws Exception {
    assertThat(
            NodeRegistrationCodec.decode(
                P4 + ",10,7680,100,NVIDIA-Tesla P4,0,true,1,hami-core:", "NVIDIA"))
        .containsExactly(dev(P4, 1, 10, 7680, 100, "NVIDIA-Tesla P4", 0, "hami-core", true));
  }

  @ParameterizedTest
  @ValueSource(strings = {":", "::"})
  void v36_emptySegments(String v) throws Exception {
    assertThat(NodeRegistrationCodec.decodeColon(v, "NVIDIA")).isEmpty();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "''|node annotation missing device separator",
        "','|node annotation missing device separator",
        "a|node annotation missing device separator",
        "',:'|unexpected field count 2 in node annotation",
        "garbage:|malformed node annotation segment: \"garbage\"",
        "'id,notanint,1,1,T,0,true:'|invalid count field: strconv.ParseInt: parsing \"notanint\": invalid syntax",
        "'id,1,notanint,1,T,0,true:'|invalid memory field: strconv.ParseInt: parsing \"notanint\": invalid syntax",
        "'id,1,1,notanint,T,0,true:'|invalid core field: strconv.ParseInt: parsing \"notanint\": invalid syntax",
        "'id,1,1,1,T,notanint,true:'|invalid numa field: strconv.Atoi: parsing \"notanint\": invalid syntax",
        "'id,1,1,1,T,notanint,notabool:'|invalid health field: strconv.ParseBool: parsing \"notabool\": invalid syntax",
        "'id,1,1,1,T:'|unexpected field count 5 in node annotation",
        "'id,1,1,1,T,0,true,notanint,hami-core:'|invalid index field: strconv.Atoi: parsing \"notanint\": invalid syntax",
        "'id,1,1,1,T,0,true,-1,hami-core:'|index field must not be negative: -1",
        "'id,2147483648,1,1,T,0,true:'|invalid count field: strconv.ParseInt: parsing \"2147483648\": value out of range",
        "'id,1,1,1,T,-2147483649,true:'|invalid numa field: strconv.Atoi: parsing \"-2147483649\": value out of range",
        "'id,99999999999x,1,1,T,0,true:'|invalid count field: strconv.ParseInt: parsing \"99999999999x\": invalid syntax",
        "'id,+,1,1,T,0,true:'|invalid count field: strconv.ParseInt: parsing \"+\": invalid syntax",
      })
  void v36_errorsMatchHamiText(String value, String message) {
    assertThatThrownBy(() -> NodeRegistrationCodec.decode(value, "NVIDIA"))
        .isInstanceOf(DeviceAnnotationException.class)
        .hasMessage(message);
  }

  @Test
  void int32BoundsAreAccepted() throws Exception {
    DeviceInfo d =
        NodeRegistrationCodec.decode("id,+2147483647,0,0,T,-2147483648,T:", "NVIDIA").get(0);
    assertThat(d.count()).isEqualTo(Integer.MAX_VALUE);
    assertThat(d.numa()).isEqualTo(Integer.MIN_VALUE);
    assertThat(d.health()).isTrue();
  }

  @Test
  void v37_encodeColon() throws Exception {
    DeviceInfo d0 = dev(P4, 0, 10, 7680, 100, "NVIDIA-Tesla P4", 0, "hami-core", true);
    assertThat(encodeColon(List.of(d0)))
        .isEqualTo(P4 + ",10,7680,100,NVIDIA-Tesla P4,0,true,0,hami-core:");
    DeviceInfo d1 = dev(P4, 1, 10, 7680, 100, "NVIDIA-Tesla P4", 0, "hami-core", true);
    assertThat(encodeColon(List.of(d1))).endsWith(",true,1,hami-core:");
    assertThat(encodeColon(List.of())).isEmpty();
    String v100 =
        "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:"
            + "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:";
    List<DeviceInfo> two = NodeRegistrationCodec.decode(v100, "NVIDIA");
    assertThat(NodeRegistrationCodec.decode(encodeColon(two), "NVIDIA")).isEqualTo(two);
  }

  @Test
  void v38_jsonEncodeOmitsZeroValues() {
    DeviceInfo a = new DeviceInfo("id-1", 1, 1, 1024, 10, "type", 0, "", List.of(), true, "X");
    DeviceInfo b = new DeviceInfo("id-2", 2, 2, 2048, 20, "type2", 1, "", List.of(), false, "X");
    assertThat(NodeRegistrationCodec.encodeJson(List.of(a)))
        .isEqualTo(
            "[{\"id\":\"id-1\",\"index\":1,\"count\":1,\"devmem\":1024,\"devcore\":10,\"type\":\"type\",\"health\":true}]");
    assertThat(NodeRegistrationCodec.encodeJson(List.of(a, b)))
        .isEqualTo(
            "[{\"id\":\"id-1\",\"index\":1,\"count\":1,\"devmem\":1024,\"devcore\":10,\"type\":\"type\",\"health\":true},"
                + "{\"id\":\"id-2\",\"index\":2,\"count\":2,\"devmem\":2048,\"devcore\":20,\"type\":\"type2\",\"numa\":1}]");
    assertThat(NodeRegistrationCodec.encodeJson(List.of())).isEqualTo("[]");
  }

  @Test
  void jsonEncodeEscapesLikeGo() {
    DeviceInfo a =
        new DeviceInfo("<&>", 0, 0, 0, 0, "a\"b\\c\n\u0001\u2028", 0, "", List.of(), false, "X");
    assertThat(NodeRegistrationCodec.encodeJson(List.of(a)))
        .isEqualTo(
            "[{\"id\":\"\\u003c\\u0026\\u003e\",\"type\":\"a\\\"b\\\\c\\n\\u0001\\u2028\"}]");
  }

  @Test
  void v39_jsonDecodeWithTrailingNewline() throws Exception {
    List<DeviceInfo> d =
        NodeRegistrationCodec.decode(
            "[{\"index\":1,\"id\":\"id-1\",\"count\":1,\"devmem\":1024,\"devcore\":10,\"type\":\"type\",\"health\":true}]\n",
            "V");
    assertThat(d)
        .containsExactly(
            new DeviceInfo("id-1", 1, 1, 1024, 10, "type", 0, "", List.of(), true, "V"));
  }

  @Test
  void v40_migProfile() throws Exception {
    MigProfile p = new MigProfile("1g.5gb", 4864, 15, 1, 7, List.of(new MigPlacement(6, 1)));
    DeviceInfo withProfile =
        new DeviceInfo("GPU-0", 0, 7, 0, 0, "", 0, "mig", List.of(p), false, "");
    assertThat(NodeRegistrationCodec.encodeJson(List.of(withProfile)))
        .isEqualTo(
            "[{\"id\":\"GPU-0\",\"count\":7,\"mode\":\"mig\",\"migProfiles\":[{\"name\":\"1g.5gb\",\"memoryMB\":4864,\"core\":15,\"sliceCount\":1,\"placements\":[{\"start\":6,\"size\":1}]}]}]");
    String mig =
        "[{\"id\":\"GPU-0\",\"count\":7,\"devmem\":40960,\"devcore\":100,\"type\":\"NVIDIA-A100-SXM4-40GB\",\"numa\":0,"
            + "\"health\":true,\"mode\":\"mig\",\"migProfiles\":[{\"name\":\"1g.5gb\",\"memoryMB\":5120,\"core\":14,\"sliceCount\":1,"
            + "\"instanceCount\":7,\"multiprocessorCount\":14,\"placements\":[{\"start\":6,\"size\":1}]}]}]";
    DeviceInfo d = NodeRegistrationCodec.decode(mig, "NVIDIA").get(0);
    assertThat(d.mode()).isEqualTo("mig");
    assertThat(d.migProfiles())
        .containsExactly(new MigProfile("1g.5gb", 5120, 14, 1, 7, List.of(new MigPlacement(6, 1))));
  }

  @Test
  void jsonGoSemantics() throws Exception {
    DeviceInfo d =
        NodeRegistrationCodec.decode(
                "[{\"ID\":\"x\",\"DevMem\":5,\"HEALTH\":true,\"extra\":{\"a\":[1]}}]", "V")
            .get(0);
    assertThat(d.id()).isEqualTo("x");
    assertThat(d.devmem()).isEqualTo(5);
    assertThat(d.health()).isTrue();
    DeviceInfo absent = NodeRegistrationCodec.decode("[{\"id\":\"y\"}]", "V").get(0);
    assertThat(absent.health()).isFalse();
    assertThat(absent.mode()).isEmpty();
    assertThat(absent.index()).isZero();
    assertThat(NodeRegistrationCodec.decode("null", "V")).isEmpty();
    assertThat(NodeRegistrationCodec.decode(" [] ", "V")).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "[{\"count\":1.5}]",
        "[{\"count\":2147483648}]",
        "[{\"index\":-1}]",
        "[{\"id\":5}]",
        "[{\"health\":1}]",
        "[{\"health\":\"true\"}]",
        "[{\"count\":\"1\"}]",
        "[] x",
        "{\"id\":\"a\"}",
        "[{\"id\":\"a\"}",
        "not-valid-json",
        "[null]",
        "[{\"migProfiles\":[null]}]"
      })
  void jsonRejectsWhatGoRejects(String v) {
    assertThatThrownBy(() -> NodeRegistrationCodec.decode(v, "V"))
        .isInstanceOf(DeviceAnnotationException.class);
  }

  @Test
  void detectFormat() throws Exception {
    assertThat(NodeRegistrationCodec.decode("[{}]", "NVIDIA")).hasSize(1);
    assertThat(NodeRegistrationCodec.decode("\n  []", "NVIDIA")).isEmpty();
    assertThatThrownBy(() -> NodeRegistrationCodec.decode("\n  [", "NVIDIA"))
        .hasMessageContaining("invalid JSON node registration");
    assertThat(NodeRegistrationCodec.decode("GPU-1,10,1,1,T,0,true:", "NVIDIA"))
        .extracting(DeviceInfo::id)
        .containsExactly("GPU-1");
  }

  @Test
  void fixturesColonForms() throws Exception {
    assertThat(NodeRegistrationCodec.decode(Fixtures.value("F-01"), "NVIDIA"))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.devmem()).isEqualTo(15360);
              assertThat(d.type()).isEqualTo("NVIDIA-Tesla T4");
              assertThat(d.mode()).isEqualTo("hami-core");
            });
    assertThat(NodeRegistrationCodec.decode(Fixtures.value("F-02"), "NVIDIA"))
        .extracting(DeviceInfo::devmem, DeviceInfo::health)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(11264, false),
            org.assertj.core.groups.Tuple.tuple(22528, false));
    assertThat(NodeRegistrationCodec.decode(Fixtures.value("F-03"), "NVIDIA")).hasSize(2);
    assertThat(NodeRegistrationCodec.decode(Fixtures.value("F-04"), "NVIDIA").get(0).devcore())
        .isEqualTo(300);
    assertThat(NodeRegistrationCodec.decode(Fixtures.value("F-05"), "NVIDIA").get(0).type())
        .isEqualTo("NVIDIA-NVIDIA GeForce RTX 3090");
    List<DeviceInfo> f7 = NodeRegistrationCodec.decode(Fixtures.value("F-07"), "NVIDIA");
    assertThat(f7).extracting(DeviceInfo::index).containsExactly(1, 2, 3, 4, 5, 6, 7, 0);
    assertThat(f7).allSatisfy(d -> assertThat(d.mode()).isEqualTo("mig"));
    List<DeviceInfo> f8 = NodeRegistrationCodec.decode(Fixtures.value("F-08"), "NVIDIA");
    assertThat(f8).extracting(DeviceInfo::numa).containsExactly(1, 1, 1, 1, 0, 0, 0);
    // round trip of every complete colon fixture through our 9-field encoder
    for (String id :
        List.of("F-01", "F-02", "F-03", "F-04", "F-05", "F-06", "F-07", "F-08", "F-61", "F-62")) {
      List<DeviceInfo> d = NodeRegistrationCodec.decode(Fixtures.value(id), "X");
      assertThat(NodeRegistrationCodec.decode(encodeColon(d), "X")).as(id).isEqualTo(d);
      assertThat(NodeRegistrationCodec.decode(NodeRegistrationCodec.encodeJson(d), "X"))
          .as(id)
          .isEqualTo(d);
    }
  }

  @Test
  void fixtureColonAndJsonTwinsAgree_F06_F21() throws Exception {
    assertThat(NodeRegistrationCodec.decode(Fixtures.value("F-21"), "NVIDIA"))
        .isEqualTo(NodeRegistrationCodec.decode(Fixtures.value("F-06"), "NVIDIA"));
  }

  @Test
  void fixturesJsonForms() throws Exception {
    DeviceInfo f17 = NodeRegistrationCodec.decode(Fixtures.value("F-17"), "NVIDIA").get(0);
    assertThat(f17.type()).isEqualTo("NVIDIA RTX PRO 6000 Blackwell Server Edition");
    assertThat(f17.index()).isZero();
    DeviceInfo f18 = NodeRegistrationCodec.decode(Fixtures.value("F-18"), "NVIDIA").get(0);
    assertThat(f18.devmem()).isEqualTo(15360);
    assertThat(f18.health()).isTrue();
    // F-19 after YAML folding: whitespace-tolerant, no mode -> ""
    String f19 =
        "[{ \"id\": \"GPU-32f85ff6-efb5-a95e-2d82-ce615ca43152\", \"count\": 10, \"devmem\": 12288, "
            + "\"devcore\": 100, \"type\": \"NVIDIA GeForce RTX 3060\", \"numa\": 0, \"health\": true }]";
    assertThat(NodeRegistrationCodec.decode(f19, "NVIDIA").get(0).mode()).isEmpty();
  }

  @Test
  void truncatedFixturesGiveTypedErrors_F20_F60() {
    assertThatThrownBy(() -> NodeRegistrationCodec.decode(Fixtures.value("F-20"), "NVIDIA"))
        .isInstanceOf(DeviceAnnotationException.class);
    assertThatThrownBy(() -> NodeRegistrationCodec.decode(Fixtures.value("F-60"), "MLU"))
        .isInstanceOf(DeviceAnnotationException.class)
        .hasMessage("unexpected field count 5 in node annotation");
  }

  @Test
  void cachingDecoderCachesValuesAndErrors() throws Exception {
    CachingRegistrationDecoder c = new CachingRegistrationDecoder("NVIDIA", 10);
    List<DeviceInfo> a = c.decode(Fixtures.value("F-08"));
    assertThat(c.decode(new String(Fixtures.value("F-08")))).isSameAs(a);
    assertThatThrownBy(() -> c.decode("garbage:"))
        .isInstanceOf(DeviceAnnotationException.class)
        .hasMessage("malformed node annotation segment: \"garbage\"");
    assertThatThrownBy(() -> c.decode("garbage:")).isInstanceOf(DeviceAnnotationException.class);
  }

  @Test
  void v41_pairScores() throws Exception {
    var s =
        PairScoreCodec.decode(
            "[{\"uuid\":\"GPU-0\",\"score\":{\"GPU-1\":100}},{\"uuid\":\"GPU-1\",\"score\":{\"GPU-0\":100}}]");
    assertThat(s.get("GPU-0")).containsEntry("GPU-1", 100);
    assertThatThrownBy(() -> PairScoreCodec.decode("not-valid-json"))
        .isInstanceOf(DeviceAnnotationException.class);
  }
}
