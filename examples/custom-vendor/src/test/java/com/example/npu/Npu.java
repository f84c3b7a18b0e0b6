package com.example.npu;

import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Test data: NPU registrations, a real NVIDIA registration, pods. */
final class Npu {
  /** HAMi registration of 2x NVIDIA A40 (fixture F-03 of ../shared/fixtures/real-values.md). */
  static final String A40_X2 =
      "GPU-03f69c50-207a-2038-9b45-23cac89cb67d,10,46068,100,NVIDIA-NVIDIA A40,0,true:"
          + "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae,10,46068,100,NVIDIA-NVIDIA A40,0,true:";

  static final String NVIDIA_REGISTER = "hami.io/node-nvidia-register";

  private Npu() {}

  /**
   * @return the JSON registration of {@code n} NPUs with 32768 MiB and 4 slots each
   */
  static String registration(int n) {
    List<DeviceInfo> devices = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      devices.add(
          new DeviceInfo(
              "NPU-" + i,
              i,
              4,
              32768,
              100,
              "Example-NPU",
              0,
              "",
              List.of(),
              true,
              NpuVendor.COMMON_WORD));
    }
    return NodeRegistrationCodec.encodeJson(devices);
  }

  static NodeView node(String name, boolean npu, boolean nvidia) {
    Map<String, String> a = new LinkedHashMap<>();
    if (npu) {
      a.put(NpuVendor.REGISTER_ANNOTATION, registration(2));
    }
    if (nvidia) {
      a.put(NVIDIA_REGISTER, A40_X2);
    }
    return NodeView.of(name, a);
  }

  /** A pod with one container asking for NPUs ({@code npus} x {@code npuMem} MiB) and/or GPUs. */
  static PodView pod(String name, int npus, int npuMem, int gpus, int gpuMem) throws Exception {
    Map<String, String> limits = new LinkedHashMap<>();
    if (npus > 0) {
      limits.put(NpuVendor.NPU, Integer.toString(npus));
      limits.put(NpuVendor.NPU_MEMORY, Integer.toString(npuMem));
    }
    if (gpus > 0) {
      limits.put("nvidia.com/gpu", Integer.toString(gpus));
      limits.put("nvidia.com/gpumem", Integer.toString(gpuMem));
    }
    return PodView.builder("default", name)
        .uid("uid-" + name)
        .containers(
            List.of(ContainerView.ofQuantities("main", "example/train:1", limits, Map.of())))
        .build();
  }
}
