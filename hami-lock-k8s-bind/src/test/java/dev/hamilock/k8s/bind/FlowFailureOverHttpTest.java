package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.FlowFailure;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 item 5, one error model: the three flows return results whose {@code failure()} carries
 * the kind, the HTTP status of the answer that failed the flow and client-java's {@link
 * ApiException} as the cause — over HTTP on the emulator, with answers injected per request.
 * Before, a Binding answered HTTP 500 ended with an empty cause (the status only in the text), and
 * the Filter threw.
 */
class FlowFailureOverHttpTest {
  static final String NS = PodBinderOverHttpTest.NS;
  static final String NODE = PodBinderOverHttpTest.NODE;
  static final String GPU = PodBinderOverHttpTest.GPU;

  private ApiServerEmulator k8s;
  private KubernetesHamiStack hami;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .clock(PodBinderOverHttpTest.CLOCK)
            .maxAttempts(2)
            .retryPolicy(
                RetryPolicy.builder()
                    .pollInterval(Duration.ofMillis(5))
                    .retryTimeout(Duration.ofSeconds(5))
                    .build())
            .build();
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, GPU));
  }

  @AfterEach
  void stop() {
    hami.close();
    k8s.close();
  }

  private PodView createGuidePod(String name) {
    return EmulatorObjects.pod(
            EmulatorObjects.createPod(
                k8s, PodBinderOverHttpTest.guidePod(name, Map.of(), Map.of())))
        .view();
  }

  @Test
  void aBindingAnsweredHttp500CarriesTheStatusAndTheApiExceptionAsCause() {
    PodView p = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("create")
            .resource("pods/binding")
            .times(1)
            .respondStatus(500, "InternalError", "etcdserver: leader changed"));

    BindResult r = hami.podBinder().bind(NS, "p1", p.uid(), NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("was not applied").contains("HTTP 500"); // the text as before
    FlowFailure f = r.failure().orElseThrow();
    assertThat(f.kind()).isEqualTo(FlowFailure.Kind.UNAVAILABLE);
    assertThat(f.httpStatus()).hasValue(500);
    assertThat(f.cause()).containsInstanceOf(ApiException.class);
    assertThat(r.cause()).isEqualTo(f.cause());
    assertThat(f.message()).isEqualTo(r.reason());
    assertThat(f.retryable()).isTrue();
    assertThat(f.contention()).isFalse();
  }

  @Test
  void aForbiddenBindingIsRejectedWith403AndNotRetryable() {
    PodView p = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("create")
            .resource("pods/binding")
            .times(1)
            .respondStatus(
                403,
                "Forbidden",
                "pods \"p1\" is forbidden: cannot create resource \"pods/binding\""));

    BindResult r = hami.podBinder().bind(NS, "p1", p.uid(), NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("was rejected");
    FlowFailure f = r.failure().orElseThrow();
    assertThat(f.kind()).isEqualTo(FlowFailure.Kind.REJECTED);
    assertThat(f.httpStatus()).hasValue(403);
    assertThat(f.cause()).containsInstanceOf(ApiException.class);
    assertThat(f.retryable()).isFalse();
  }

  @Test
  void aRefusedAllocationPatchCarriesItsStatusFromTheClusterPort() {
    PodView p = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("pods")
            .times(1)
            .respondStatus(
                422, "Invalid", "Pod \"p1\" is invalid: metadata.annotations: Too long"));

    BindResult r = hami.podBinder().bind(NS, "p1", p.uid(), NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).startsWith("cannot write the allocation of pod default/p1");
    FlowFailure f = r.failure().orElseThrow();
    assertThat(f.kind()).isEqualTo(FlowFailure.Kind.REJECTED);
    assertThat(f.httpStatus()).hasValue(422);
    assertThat(f.cause())
        .hasValueSatisfying(c -> assertThat(c.getCause()).isInstanceOf(ApiException.class));
    assertThat(r.locksHeld()).isFalse();
  }

  @Test
  void aLockWriteRefusedBy403CarriesTheStatusFromTheLockBackend() {
    PodView p = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1)
            .respondStatus(403, "Forbidden", "nodes \"" + NODE + "\" is forbidden"));

    BindResult r = hami.podBinder().bind(NS, "p1", p.uid(), NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    FlowFailure f = r.failure().orElseThrow();
    assertThat(f.kind()).isEqualTo(FlowFailure.Kind.REJECTED);
    assertThat(f.httpStatus()).hasValue(403);
    assertThat(f.retryable()).isFalse();
  }

  @Test
  void contentionIsTypedAsContentionWithoutStatus() {
    PodView holder = createGuidePod("holder");
    assertThat(hami.podBinder().bind(NS, "holder", holder.uid(), NODE).outcome())
        .isEqualTo(BindOutcome.BOUND);
    PodView solo =
        EmulatorObjects.pod(
                EmulatorObjects.createPod(
                    k8s,
                    PodView.builder(NS, "solo")
                        .containers(
                            PodBinderOverHttpTest.guidePod("x", Map.of(), Map.of()).containers())
                        .build()))
            .view();

    BindResult r =
        hami.podBinder().bind(NS, "solo", solo.uid(), NODE); // not a gang member: fail fast

    assertThat(r.outcome()).isEqualTo(BindOutcome.CONTENDED);
    FlowFailure f = r.failure().orElseThrow();
    assertThat(f.contention()).isTrue();
    assertThat(f.retryable()).isTrue();
    assertThat(f.httpStatus()).isEmpty();
  }

  @Test
  void theFilterReturnsAFailedDecisionWithTheStatusInsteadOfThrowing() {
    PodView p = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("nodes")
            .times(10)
            .respondStatus(
                503, "ServiceUnavailable", "the server is currently unable to handle the request"));

    FilterDecision d = hami.extenderFilter().filter(p, List.of(NODE));

    assertThat(d.node()).isEmpty();
    assertThat(d.passedNodes()).isEmpty();
    FlowFailure f = d.failure().orElseThrow();
    assertThat(f.kind()).isEqualTo(FlowFailure.Kind.UNAVAILABLE);
    assertThat(f.httpStatus()).hasValue(503);
    assertThat(f.message()).startsWith("GET node " + NODE + " failed: HTTP 503");
  }

  @Test
  void unparsableRequestsAreAFailedDecisionOfKindInvalidRequest() throws Exception {
    PodView bad =
        PodView.builder(NS, "bad")
            .containers(
                List.of(
                    ContainerView.ofQuantities(
                        "main",
                        "cuda",
                        Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "16Gi"),
                        Map.of())))
            .build();

    FilterDecision d = hami.extenderFilter().decide(bad, List.of());

    FlowFailure f = d.failure().orElseThrow();
    assertThat(f.kind()).isEqualTo(FlowFailure.Kind.INVALID_REQUEST);
    assertThat(f.retryable()).isFalse();
    assertThat(d.devicesRequested())
        .as("a caller that ignores the failure lets no node through")
        .isTrue();
  }

  @Test
  void theHandoffReportsAnUnreadableNodeAsErrorWithTheStatus() {
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("nodes")
            .times(10)
            .respondStatus(500, "InternalError", "boom"));

    HandoffResult h = hami.devicePluginHandoff("NVIDIA").allocateAll(NODE);

    assertThat(h.status()).isEqualTo(HandoffResult.Status.ERROR);
    FlowFailure f = h.failure().orElseThrow();
    assertThat(f.kind()).isEqualTo(FlowFailure.Kind.UNAVAILABLE);
    assertThat(f.httpStatus()).hasValue(500);
    assertThat(f.cause()).isPresent();
    assertThat(f.message()).isEqualTo(h.reason());
  }
}
