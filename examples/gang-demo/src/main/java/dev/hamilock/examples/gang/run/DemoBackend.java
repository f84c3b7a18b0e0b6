package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.examples.gang.input.DemoInput;
import java.util.List;
import java.util.Map;

/**
 * Where a demo run binds: the embedded API emulator over client-java (default), an in-process
 * cluster (fast, for comparison), or a real cluster. One backend per run (mode), so that the gang
 * and fail-fast runs start from the same state and count their own requests.
 */
public interface DemoBackend extends AutoCloseable {

  /**
   * @return a one-line description for the report, e.g. {@code embedded API emulator at
   *     http://127.0.0.1:40123}
   */
  String description();

  /**
   * Creates the input's nodes, PodGroups and pods (a real cluster: checks that they exist instead).
   *
   * @param input the input
   * @throws Exception if the backend refused an object (the message names it)
   */
  void seed(DemoInput input) throws Exception;

  /**
   * @param name who uses it
   * @param waitsForLocks whether it waits for contended locks (a gang-mode replica): then its locks
   *     run the node watch that wakes waiters on release; device plugins and fail-fast replicas do
   *     not
   * @return a new endpoint with its own client and lock instances
   * @throws Exception if it cannot be created
   */
  Endpoint endpoint(String name, boolean waitsForLocks) throws Exception;

  /**
   * @return whether device plugins are simulated here (false for a real cluster, whose HAMi plugin
   *     hands off)
   */
  boolean simulatesDevicePlugins();

  /** Zeroes the request counters (after seeding). */
  void resetCounters();

  /**
   * @return API requests since {@link #resetCounters()} by {@code "verb resource"} ({@code "patch
   *     nodes"}, {@code "create pods/binding"}), sorted
   */
  Map<String, Long> requestsByVerb();

  /**
   * @param input the input (whose pods to read)
   * @return the input's pods as stored now
   * @throws Exception on a read failure
   */
  List<ClusterPod> pods(DemoInput input) throws Exception;

  /**
   * @param input the input (whose nodes to read)
   * @return the input's nodes as stored now (annotations include any lock left behind)
   * @throws Exception on a read failure
   */
  List<NodeView> nodes(DemoInput input) throws Exception;

  /** Stops servers and threads; never throws. */
  @Override
  void close();
}
