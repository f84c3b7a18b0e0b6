package dev.hamilock.reference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.WriteRecord;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.Request;
import okio.Buffer;

/**
 * Test-side wrapper of the testkit's {@link ApiServerEmulator}: seeding and inspection bypass HTTP
 * (so they are not counted), clients record the PATCH requests they send (content type and body),
 * and the fault helpers express the HAMi test scenarios (a write landing between read and patch, a
 * lost response).
 */
final class EmulatedCluster implements AutoCloseable {

  /** One PATCH request as sent by a client. */
  record SentPatch(String path, String contentType, String body) {}

  private final ApiServerEmulator emulator;
  private final List<SentPatch> patches = Collections.synchronizedList(new ArrayList<>());

  private EmulatedCluster(ApiServerEmulator emulator) {
    this.emulator = emulator;
  }

  static EmulatedCluster start() {
    return new EmulatedCluster(ApiServerEmulator.start());
  }

  /**
   * A new client (one per simulated HAMi process) with a 10 s read timeout that records PATCHes.
   */
  ApiClient newClient() {
    ApiClient client = emulator.newApiClient(Duration.ofSeconds(10));
    client.setHttpClient(
        client
            .getHttpClient()
            .newBuilder()
            .addInterceptor(
                chain -> {
                  Request request = chain.request();
                  if ("PATCH".equals(request.method()) && request.body() != null) {
                    Buffer buffer = new Buffer();
                    request.body().writeTo(buffer);
                    patches.add(
                        new SentPatch(
                            request.url().encodedPath(),
                            String.valueOf(request.body().contentType()),
                            buffer.readUtf8()));
                  }
                  return chain.proceed(request);
                })
            .build());
    return client;
  }

  List<SentPatch> sentPatches() {
    synchronized (patches) {
      return List.copyOf(patches);
    }
  }

  void createNamespace(String name) {
    emulator.createNamespace(name);
  }

  void createNode(String name, Map<String, String> annotations) {
    emulator.createNode(name, annotations);
  }

  void deleteNode(String name) {
    emulator.delete("nodes", null, name);
  }

  void createPod(String namespace, String name) {
    emulator.createPod(namespace, name, Map.of());
  }

  /** A pod bound to {@code nodeName} with the given phase and annotations. */
  void createPod(
      String namespace,
      String name,
      String nodeName,
      String phase,
      Map<String, String> annotations) {
    emulator.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            Map.of("name", name, "namespace", namespace, "annotations", annotations),
            "spec",
            Map.of(
                "nodeName",
                nodeName,
                "containers",
                List.of(Map.of("name", "main", "image", "busybox"))),
            "status",
            Map.of("phase", phase)));
  }

  void deletePod(String namespace, String name) {
    emulator.delete("pods", namespace, name);
  }

  Optional<String> nodeAnnotation(String node, String key) {
    return annotation(emulator.get("nodes", null, node).orElseThrow(), key);
  }

  Optional<String> podAnnotation(String namespace, String name, String key) {
    return annotation(emulator.get("pods", namespace, name).orElseThrow(), key);
  }

  private static Optional<String> annotation(JsonNode object, String key) {
    JsonNode value = object.path("metadata").path("annotations").path(key);
    return value.isTextual() ? Optional.of(value.asText()) : Optional.empty();
  }

  /**
   * Out-of-band write of a node annotation ({@code null} removes it); bumps the resourceVersion.
   */
  void setNodeAnnotation(String node, String key, String value) {
    emulator.mutate(
        "nodes",
        null,
        node,
        n -> {
          ObjectNode meta = (ObjectNode) n.path("metadata");
          ObjectNode annotations =
              meta.has("annotations")
                  ? (ObjectNode) meta.get("annotations")
                  : meta.putObject("annotations");
          if (value == null) {
            annotations.remove(key);
          } else {
            annotations.put(key, value);
          }
          return n;
        });
  }

  /**
   * Runs {@code write} just before the next node PATCH is handled (so that PATCH meets a newer
   * version).
   */
  void beforeNextNodePatch(Runnable write) {
    emulator.addFault(
        FaultRule.matching().verb("patch").resource("nodes").times(1).invoke(r -> write.run()));
  }

  /**
   * Runs {@code write} instead of the next node PATCH and answers 500: the effect of a patch that
   * landed but whose response was lost.
   */
  void failNextNodePatchAfter(Runnable write) {
    emulator.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1)
            .invoke(
                r -> {
                  write.run();
                  throw new IllegalStateException("response lost");
                }));
  }

  void failNodePatches(int times, int status, String reason, String message) {
    emulator.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(times)
            .respondStatus(status, reason, message));
  }

  void failPodGets(int times, int status, String reason, String message) {
    emulator.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("pods")
            .times(times)
            .respondStatus(status, reason, message));
  }

  List<WriteRecord> nodeHistory(String node) {
    return emulator.history("nodes", null, node);
  }

  long requests(String verb, String resource) {
    return emulator.requestCount(verb, resource);
  }

  long totalRequests() {
    return emulator.totalRequests();
  }

  Map<String, Long> requestCounts() {
    Map<String, Long> out = new LinkedHashMap<>();
    emulator.requestCounts().forEach((k, v) -> out.put(k.toString(), v));
    return out;
  }

  void resetCounters() {
    emulator.resetCounters();
    patches.clear();
  }

  @Override
  public void close() {
    emulator.close();
  }
}
