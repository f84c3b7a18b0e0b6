package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.annotation.AnnotationLockStore;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStack;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.Fabric8LockStore;
import dev.hamilock.fabric8.Fabric8OwnerLiveness;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import dev.hamilock.testkit.FaultRule;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Answers the lock cannot read, on both clients (found by a reviewer, breaker6): a node PATCH
 * answered 2xx with a body that is no JSON object (a proxy's page) was applied, and is "written" on
 * both clients (client-java threw Gson's {@code JsonSyntaxException} out of the store, so the
 * acquirer did not roll the lock back: the node stayed locked for the lock timeout); a GET answered
 * so is {@link LockBackendException.Kind#UNAVAILABLE} on both (client-java threw Gson's exception,
 * fabric8 a {@code KubernetesClientException}, a {@code NullPointerException} or an {@code
 * IllegalArgumentException}), so a maybe-applied create it was to decide is rolled back. The
 * holder's liveness check answers alike on both clients whatever fabric8's {@code Config} repeats:
 * fabric8's check took the client's repetitions (fabric8's default: 10, so one check ran for about
 * 20 s against a 503) and called a lost answer REJECTED ("HTTP -1").
 */
class UnreadableAndInterruptedAnswersOnBothClientsTest extends OnSharedEmulator {

  private static final String PAGE = "<html><body>Welcome</body></html>";

  KubernetesClient fabric8;

  @BeforeEach
  void fresh() {
    k8s.clearFaults();
    fabric8 = Fabric8Replicas.client(k8s);
  }

  @AfterEach
  void close() {
    k8s.clearFaults();
    fabric8.close();
  }

  private Map<String, AnnotationLockStore> stores() {
    return Map.of(
        "client-java",
        NodeAnnotationLockStore.builder(
                k8s.newApiClient(Duration.ofSeconds(5)), Duration.ofSeconds(5))
            .build(),
        "fabric8",
        Fabric8LockStore.builder(fabric8).build());
  }

  @Test
  void aPatchApplied2xxWithAnUnreadableBodyIsWrittenOnBothClients() throws Exception {
    for (var s : stores().entrySet()) {
      for (String body : List.of(PAGE, "{\"kind\":", "")) {
        String node = cluster.node(Cluster.unique("unread"));
        k8s.addFault(
            FaultRule.matching()
                .verb("patch")
                .resource("nodes")
                .times(1)
                .respondAfterApply(200, body));
        Throwable t = catchThrowable(() -> s.getValue().createIfAbsent(node, Cluster.KEY, "v"));
        assertThat(t).as("%s, answer [%s]", s.getKey(), body).isNull();
        assertThat(cluster.lock(node)).contains("v");
      }
    }
  }

  @Test
  void anUnreadable2xxReadIsUnavailableOnBothClients() {
    for (var s : stores().entrySet()) {
      for (String body : List.of(PAGE, "{\"kind\":", "", "null", "[]")) {
        String node = cluster.node(Cluster.unique("unread"));
        k8s.addFault(
            FaultRule.matching().verb("get").resource("nodes").times(1).respond(200, body));
        Throwable t = catchThrowable(() -> s.getValue().read(node, Cluster.KEY));
        assertThat(t)
            .as("%s, answer [%s]", s.getKey(), body)
            .isInstanceOfSatisfying(
                LockBackendException.class,
                e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE));
      }
    }
  }

  @Test
  void aMaybeAppliedCreateWhoseReReadIsUnreadableIsRolledBackOnBothClients() throws Exception {
    cluster.namespace("ns");
    cluster.pod("ns", "p", "Running");
    LockOwner owner = LockOwner.of("ns", "p");
    try (KubernetesLockStack cj = Fabric8Replicas.clientJavaLocks(k8s);
        Fabric8LockStack f8 =
            Fabric8LockStack.builder(fabric8).environment(Map.of()).watch(false).build()) {
      for (LockStack stack : List.<LockStack>of(cj, f8)) {
        String node = cluster.node(Cluster.unique("rollback"));
        // the create applies but its answer is lost; the GET that decides it answers a page
        k8s.addFault(
            FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
        k8s.addFault(
            FaultRule.matching().verb("get").resource("nodes").times(1).respond(200, PAGE));
        NodeLockAcquirer acquirer = stack.acquirer();
        Throwable t =
            catchThrowable(() -> acquirer.acquire(node, owner, false, List.of(stack.nodeLock())));
        assertThat(t)
            .as("%s", stack)
            .isInstanceOfSatisfying(
                LockBackendException.class,
                e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE));
        assertThat(cluster.lock(node)).as("%s: the lock is rolled back", stack).isEmpty();
      }
    }
  }

  /**
   * fabric8's HTTP call is asynchronous: an interrupted wait for it returned at once and left the
   * PATCH in flight on its open connection, so the acquirer's rollback read the node before the
   * create landed and the lock stayed held for its timeout. (client-java's blocking OkHttp call
   * either completes or closes its connection, which makes kube-apiserver cancel the request; the
   * emulator applies a disconnected client's write all the same, so this race is not run on it.)
   */
  @Test
  void anInterruptedFabric8CreateIsSettledBeforeItsRollback() throws Exception {
    cluster.namespace("ns");
    cluster.pod("ns", "p", "Running");
    LockOwner owner = LockOwner.of("ns", "p");
    try (Fabric8LockStack stack =
        Fabric8LockStack.builder(fabric8).environment(Map.of()).watch(false).build()) {
      String warm = cluster.node(Cluster.unique("warm")); // no class loading in the race below
      stack.acquirer().acquire(warm, owner, false, List.of(stack.nodeLock()));
      stack.acquirer().releaseAll(warm, owner, List.of(stack.nodeLock()));
      String node = cluster.node(Cluster.unique("interrupted"));
      CountDownLatch arrived = new CountDownLatch(1);
      k8s.addFault(
          FaultRule.matching()
              .verb("patch")
              .resource("nodes")
              .times(1)
              .invoke(
                  r -> {
                    arrived.countDown();
                    try {
                      Thread.sleep(1_000); // the create is applied after its caller's interrupt
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }));
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread binder =
          new Thread(
              () ->
                  failure.set(
                      catchThrowable(
                          () ->
                              stack
                                  .acquirer()
                                  .acquire(node, owner, false, List.of(stack.nodeLock())))));
      binder.start();
      assertThat(arrived.await(30, TimeUnit.SECONDS)).isTrue();
      binder.interrupt();
      binder.join();
      assertThat(
              Fabric8Replicas.awaitTrue(
                  () -> cluster.lockHistory(node).stream().anyMatch(Optional::isPresent)))
          .as("%s: the create was applied", stack)
          .isTrue();
      if (failure.get() == null) { // acquired, the interrupt noticed later: the lock is ours
        assertThat(cluster.lock(node))
            .as("%s", stack)
            .hasValueSatisfying(v -> assertThat(v).endsWith(",ns,p"));
        stack.acquirer().releaseAll(node, owner, List.of(stack.nodeLock()));
      } else {
        assertThat(failure.get())
            .as("%s", stack)
            .isInstanceOfSatisfying(
                LockBackendException.class,
                e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.INTERRUPTED));
        assertThat(cluster.lock(node)).as("%s: not acquired, so rolled back", stack).isEmpty();
      }
    }
  }

  @Test
  void aFailedTestAnsweredWithNullCausesIsContentionOnBothClients() throws Exception {
    String status =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":422,"
            + "\"details\":{\"causes\":null}}";
    for (var s : stores().entrySet()) {
      String node = cluster.node(Cluster.unique("causes"));
      cluster.setLock(node, "theirs");
      k8s.addFault(
          FaultRule.matching().verb("patch").resource("nodes").times(1).respond(422, status));
      assertThat(s.getValue().createIfAbsent(node, Cluster.KEY, "mine"))
          .as(s.getKey())
          .isEqualTo(CasResult.found("theirs"));
    }
  }

  @Test
  void aClosedFabric8ClientFailsTyped() {
    KubernetesClient closed = Fabric8Replicas.client(k8s);
    AnnotationLockStore store = Fabric8LockStore.builder(closed).build();
    OwnerLiveness liveness = Fabric8OwnerLiveness.create(closed);
    closed.close();
    String node = cluster.node(Cluster.unique("closed"));
    for (Throwable t :
        List.of(
            catchThrowable(() -> store.read(node, Cluster.KEY)),
            catchThrowable(() -> store.createIfAbsent(node, Cluster.KEY, "v")),
            catchThrowable(() -> liveness.status(LockOwner.of("ns", "p"))))) {
      assertThat(t)
          .isInstanceOfSatisfying(
              LockBackendException.class, e -> assertThat(e.getMessage()).contains("closed"));
    }
  }

  @Test
  void theHolderCheckAnswersAlikeOnBothClientsWhateverFabric8Repeats() throws Exception {
    cluster.namespace("ns");
    cluster.pod("ns", "holder", "Running");
    LockOwner holder = LockOwner.of("ns", "holder");
    Config config = Config.fromKubeconfig(Files.readString(k8s.kubeconfigFile()));
    config.setRequestTimeout(5_000);
    config.setRequestRetryBackoffInterval(10); // fabric8's default limit (10), a short interval
    try (KubernetesClient repeating = new KubernetesClientBuilder().withConfig(config).build()) {
      Map<String, OwnerLiveness> checks =
          Map.of(
              "client-java",
              PodOwnerLiveness.create(
                  k8s.newApiClient(Duration.ofSeconds(5)), Duration.ofSeconds(5), 5),
              "fabric8",
              Fabric8OwnerLiveness.create(repeating));
      for (var c : checks.entrySet()) {
        assertThat(c.getValue().status(holder).state())
            .as(c.getKey())
            .isEqualTo(OwnerLiveness.State.ALIVE);
        k8s.clearFaults();
        k8s.resetCounters();
        k8s.addFault(
            FaultRule.matching()
                .verb("get")
                .resource("pods")
                .respondStatus(503, "ServiceUnavailable", "overloaded"));
        assertThat(catchThrowable(() -> c.getValue().status(holder)))
            .as("%s, 503", c.getKey())
            .isInstanceOfSatisfying(
                LockBackendException.class,
                e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE));
        assertThat(k8s.requestCount("get", "pods")).as("%s, 503", c.getKey()).isEqualTo(5);
        k8s.clearFaults();
        k8s.addFault(FaultRule.matching().verb("get").resource("pods").closeConnection());
        assertThat(catchThrowable(() -> c.getValue().status(holder)))
            .as("%s, no answer", c.getKey())
            .isInstanceOfSatisfying(
                LockBackendException.class,
                e -> {
                  assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE);
                  assertThat(e.httpStatus()).isEmpty();
                  assertThat(e.getMessage()).contains("no answer");
                });
        k8s.clearFaults();
        k8s.addFault(FaultRule.matching().verb("get").resource("pods").respond(200, PAGE));
        assertThat(catchThrowable(() -> c.getValue().status(holder)))
            .as("%s, unreadable 2xx", c.getKey())
            .isInstanceOfSatisfying(
                LockBackendException.class,
                e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE));
        k8s.clearFaults();
      }
    }
  }
}
