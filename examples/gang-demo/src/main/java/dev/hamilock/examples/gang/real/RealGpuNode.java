package dev.hamilock.examples.gang.real;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GPU node of the real-scheduler scenarios: a HAMi registration annotation byte-exact from {@code
 * shared/fixtures/real-values.md} and the {@code nvidia.com/gpu} capacity the device plugin would
 * report (10 slots per card).
 *
 * @param name the node's name
 * @param fixture the fixture id the registration comes from
 * @param registration the {@code hami.io/node-nvidia-register} value
 */
public record RealGpuNode(String name, String fixture, String registration) {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * The nodes by name: node-a (F-03, 2x A40), node-b (F-17, 1x RTX PRO 6000), node-h20 (F-08, 7x
   * H20-3e).
   */
  public static final Map<String, RealGpuNode> ALL = nodes();

  /**
   * node-p, the preemption scenario's node ({@link PreemptionScenario}): one A40 of F-03's shape
   * (10 slots, 46068 MiB, 100 %) under its own UUID; created by that scenario only, not in {@link
   * #ALL}.
   */
  public static final RealGpuNode PREEMPTION =
      new RealGpuNode(
          "node-p",
          "F-03",
          "GPU-9a1b2c3d-0000-4000-8000-000000000001,10,46068,100,NVIDIA-NVIDIA A40,0,true:");

  /**
   * node-q, the preemption scenario's node for its gang ({@link PreemptionScenario}): node-p's
   * shape under another UUID; created by that scenario only, not in {@link #ALL}.
   */
  public static final RealGpuNode PREEMPTION_GANG =
      new RealGpuNode(
          "node-q",
          "F-03",
          "GPU-9a1b2c3d-0000-4000-8000-000000000002,10,46068,100,NVIDIA-NVIDIA A40,0,true:");

  /**
   * @param name a node's name
   * @return the node of {@link #ALL}, {@link #PREEMPTION} or {@link #PREEMPTION_GANG} of that name,
   *     empty for another
   */
  public static java.util.Optional<RealGpuNode> named(String name) {
    for (RealGpuNode n : List.of(PREEMPTION, PREEMPTION_GANG)) {
      if (n.name().equals(name)) {
        return java.util.Optional.of(n);
      }
    }
    return java.util.Optional.ofNullable(ALL.get(name));
  }

  private static Map<String, RealGpuNode> nodes() {
    Map<String, RealGpuNode> m = new LinkedHashMap<>();
    m.put(
        "node-a",
        new RealGpuNode(
            "node-a",
            "F-03",
            "GPU-03f69c50-207a-2038-9b45-23cac89cb67d,10,46068,100,NVIDIA-NVIDIA A40,0,true:"
                + "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae,10,46068,100,NVIDIA-NVIDIA A40,0,true:"));
    m.put(
        "node-b",
        new RealGpuNode(
            "node-b",
            "F-17",
            "[{\"id\":\"GPU-3c4a3856-fbb4-1425-9679-aed25f4d2977\",\"count\":10,\"devmem\":97887,"
                + "\"devcore\":100,\"type\":\"NVIDIA RTX PRO 6000 Blackwell Server Edition\",\"mode\":\"hami-core\","
                + "\"health\":true,\"devicepairscore\":{}}]"));
    m.put(
        "node-h20",
        new RealGpuNode(
            "node-h20",
            "F-08",
            "GPU-3d8e41ef-48bf-f981-f119-e850eafb2e4a,10,143771,100,NVIDIA-NVIDIA H20-3e,1,true,3,hami-core:"
                + "GPU-6e869947-34aa-ce8b-8861-c04986721746,10,143771,100,NVIDIA-NVIDIA H20-3e,1,true,4,hami-core:"
                + "GPU-312ab3b4-2aa8-8b2c-0ee1-ed89865621bb,10,143771,100,NVIDIA-NVIDIA H20-3e,1,true,5,hami-core:"
                + "GPU-a30238fb-b6c9-2959-2edb-c4da3825ccef,10,143771,100,NVIDIA-NVIDIA H20-3e,1,true,6,hami-core:"
                + "GPU-5e4890bf-3b47-28b9-0aab-03a11daafcee,10,143771,100,NVIDIA-NVIDIA H20-3e,0,true,0,hami-core:"
                + "GPU-26f28870-8ff1-bd77-523d-955b70a6e66a,10,143771,100,NVIDIA-NVIDIA H20-3e,0,true,1,hami-core:"
                + "GPU-598af47f-7434-6494-4de9-a80152db8b4c,10,143771,100,NVIDIA-NVIDIA H20-3e,0,true,2,hami-core:"));
    return java.util.Collections.unmodifiableMap(m);
  }

  /**
   * The registered cards, read from the registration (colon form: id, count, devmem, devcore, ...;
   * JSON form: id, count, devmem, devcore keys).
   *
   * @return card id to {count, devmem MiB, devcore %}
   */
  public Map<String, long[]> cards() {
    Map<String, long[]> out = new LinkedHashMap<>();
    if (registration.startsWith("[")) {
      try {
        for (JsonNode d : MAPPER.readTree(registration)) {
          out.put(
              d.path("id").asText(),
              new long[] {
                d.path("count").asLong(), d.path("devmem").asLong(), d.path("devcore").asLong()
              });
        }
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new UncheckedIOException(e);
      }
      return out;
    }
    for (String dev : registration.split(":")) {
      if (!dev.isEmpty()) {
        String[] f = dev.split(",");
        out.put(
            f[0], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])});
      }
    }
    return out;
  }

  /**
   * @return the {@code nvidia.com/gpu} capacity: the cards' slots
   */
  public long gpuSlots() {
    return cards().values().stream().mapToLong(c -> c[0]).sum();
  }
}
