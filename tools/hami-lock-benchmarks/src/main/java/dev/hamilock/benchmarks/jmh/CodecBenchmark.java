package dev.hamilock.benchmarks.jmh;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Wire codecs on the hot paths, with real HAMi values ({@link ClusterFixtures}):
 *
 * <ul>
 *   <li>lock record parse and format ({@link LockRecordCodec}; HAMi {@code
 *       pkg/util/nodelock/nodelock.go} {@code ParseNodeLock}/{@code GenerateNodeLockKeyByPod});
 *   <li>decode of an 8-GPU JSON {@code hami.io/node-nvidia-register} value, uncached ({@link
 *       NodeRegistrationCodec#decodeJson}; HAMi {@code pkg/device/devices.go});
 *   <li>pod-devices encode and decode ({@link PodDevicesCodec}; HAMi {@code
 *       EncodePodDevices}/{@code DecodePodDevices}).
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CodecBenchmark {

  private String lockValue;
  private LockRecord lockRecord;
  private String registration;
  private String podDevicesValue;
  private List<List<ContainerDevice>> podDevices;

  /**
   * Loads the values.
   *
   * @throws DeviceAnnotationException never for the fixed values
   */
  @Setup
  public void setUp() throws DeviceAnnotationException {
    lockValue = ClusterFixtures.LOCK_VALUE;
    lockRecord =
        LockRecord.of(Instant.parse("2026-06-14T15:05:03Z"), LockOwner.of("default", "gang-pod-1"));
    registration = ClusterFixtures.registrationJson8();
    podDevicesValue = ClusterFixtures.POD_DEVICES_VALUE;
    podDevices = PodDevicesCodec.decode(podDevicesValue);
  }

  /**
   * @return the parsed lock value
   * @throws MalformedLockException never for the fixed value
   */
  @Benchmark
  public LockRecord lockRecordParse() throws MalformedLockException {
    return LockRecordCodec.parse(lockValue);
  }

  /**
   * @return the formatted lock value
   */
  @Benchmark
  public String lockRecordFormat() {
    return LockRecordCodec.format(lockRecord);
  }

  /**
   * @return the 8 decoded devices
   * @throws DeviceAnnotationException never for the fixed value
   */
  @Benchmark
  public List<DeviceInfo> registrationDecodeJson8Gpus() throws DeviceAnnotationException {
    return NodeRegistrationCodec.decodeJson(registration, ClusterFixtures.NVIDIA);
  }

  /**
   * @return the encoded two-container value
   */
  @Benchmark
  public String podDevicesEncode() {
    return PodDevicesCodec.encode(podDevices);
  }

  /**
   * @return the decoded two-container value
   * @throws DeviceAnnotationException never for the fixed value
   */
  @Benchmark
  public List<List<ContainerDevice>> podDevicesDecode() throws DeviceAnnotationException {
    return PodDevicesCodec.decode(podDevicesValue);
  }
}
