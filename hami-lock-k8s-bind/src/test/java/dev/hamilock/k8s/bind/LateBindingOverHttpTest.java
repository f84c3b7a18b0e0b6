package dev.hamilock.k8s.bind;

import static dev.hamilock.k8s.bind.PodBinderOverHttpTest.CLOCK;
import static dev.hamilock.k8s.bind.PodBinderOverHttpTest.GPU;
import static dev.hamilock.k8s.bind.PodBinderOverHttpTest.NODE;
import static dev.hamilock.k8s.bind.PodBinderOverHttpTest.NS;
import static dev.hamilock.k8s.bind.PodBinderOverHttpTest.gpuNode;
import static dev.hamilock.k8s.bind.PodBinderOverHttpTest.guidePod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import io.kubernetes.client.openapi.ApiClient;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The late Binding through client-java on the emulator: the first Binding POST of a bind is held at
 * the client's HTTP layer and answered as a read timeout (the server has not seen it yet), then
 * sent to the server as it was — kube-apiserver applying a POST its client gave up on. Its {@code
 * metadata.resourceVersion} precondition (the emulator honours it as {@code
 * pkg/registry/core/pod/storage/storage.go} does: 409) keeps it from binding a pod the flow has
 * cleaned up; landing before the clean-up, it is found bound.
 */
class LateBindingOverHttpTest {
  private ApiServerEmulator k8s;
  private KubernetesHamiStack hami;
  private ApiClient api;
  private final AtomicBoolean holdNextBinding = new AtomicBoolean(true);
  private final AtomicReference<Request> held = new AtomicReference<>();
  private final AtomicBoolean sendBeforeNextPodPatch = new AtomicBoolean();
  private final AtomicReference<Integer> lateStatus = new AtomicReference<>();
  private final AtomicReference<String> lateBody = new AtomicReference<>("");

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    api = k8s.newApiClient(Duration.ofSeconds(10));
    api.setHttpClient(
        api.getHttpClient()
            .newBuilder()
            .addInterceptor(
                chain -> {
                  Request r = chain.request();
                  String path = r.url().encodedPath();
                  if (path.endsWith("/binding") && holdNextBinding.getAndSet(false)) {
                    held.set(r);
                    throw new SocketTimeoutException("injected: read timed out");
                  }
                  if (r.method().equals("PATCH")
                      && path.contains("/pods/")
                      && held.get() != null
                      && sendBeforeNextPodPatch.getAndSet(false)) {
                    lateStatus.set(sendHeld());
                  }
                  return chain.proceed(r);
                })
            .build());
    hami =
        KubernetesHamiStack.builder(api)
            .clock(CLOCK)
            .retryPolicy(
                RetryPolicy.builder()
                    .pollInterval(Duration.ofMillis(5))
                    .retryTimeout(Duration.ofSeconds(5))
                    .build())
            .build();
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
  }

  @AfterEach
  void stop() {
    hami.close();
    k8s.close();
  }

  /** Sends the held Binding POST, byte for byte; {@return its HTTP status} */
  private int sendHeld() throws IOException {
    try (Response late = api.getHttpClient().newCall(held.get()).execute()) {
      lateBody.set(late.body() == null ? "" : late.body().string());
      return late.code();
    }
  }

  private String createGuidePod(String name) {
    return EmulatorObjects.pod(EmulatorObjects.createPod(k8s, guidePod(name, Map.of(), Map.of())))
        .view()
        .uid();
  }

  private boolean bound(String name) {
    return EmulatorObjects.pod(k8s.get("pods", NS, name).orElseThrow()).isBound();
  }

  @Test
  void aTimedOutBindingTheServerAppliesAfterTheCleanupIsRefusedWith409() throws Exception {
    String uid = createGuidePod("p1");

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("not applied");
    assertThat(EmulatorObjects.lock(k8s, NODE)).isNull();
    assertThat(sendHeld()).isEqualTo(409);
    assertThat(lateBody.get()).contains("ResourceVersion in precondition");
    assertThat(bound("p1")).isFalse();
    assertThat(EmulatorObjects.annotations(k8s, NS, "p1")).doesNotContainKey("hami.io/bind-phase");

    String uid2 = createGuidePod("p2");
    assertThat(hami.podBinder().bind(NS, "p2", uid2, NODE).outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(hami.devicePluginHandoff("NVIDIA").allocateAll(NODE).pod())
        .hasValueSatisfying(o -> assertThat(o.name()).isEqualTo("p2"));
  }

  @Test
  void aTimedOutBindingTheServerAppliesBeforeTheCleanupIsFoundBound() throws Exception {
    String uid = createGuidePod("p1");
    sendBeforeNextPodPatch.set(true); // the clean-up's clear patch: the allocation's came before

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(lateStatus.get()).as(lateBody.get()).isEqualTo(201);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.locksHeld()).isTrue();
    assertThat(EmulatorObjects.lock(k8s, NODE)).endsWith("," + NS + ",p1");
    assertThat(EmulatorObjects.annotations(k8s, NS, "p1"))
        .containsEntry("hami.io/bind-phase", "allocating");
    assertThat(hami.devicePluginHandoff("NVIDIA").allocateAll(NODE).pod())
        .hasValueSatisfying(o -> assertThat(o.name()).isEqualTo("p1"));
  }
}
