package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.hamilock.testkit.ApiServerEmulator;
import io.kubernetes.client.util.ClientBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code audit} and the {@code locks} summary count DRA usage (issue 28 item 3). The emulator does
 * not serve {@code resource.k8s.io/v1} (it answers 404 before its fault rules, as a cluster without
 * DRA), so the doctor talks to a small HTTP server in front of it that answers the ResourceSlice
 * and ResourceClaim lists with canned JSON and the node and pod lists from the emulator; without
 * the canned lists it answers 404, and the audit says nothing about DRA. Objects as NVIDIA's DRA
 * driver publishes them (driver {@code gpu.nvidia.com}, pool = node name, device {@code
 * gpu-<minor>}, attribute {@code uuid}).
 */
class AuditDraTest {
  private ApiServerEmulator k8s;
  private HttpServer front;
  private final Map<String, String> canned = new HashMap<>();

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    k8s.createNamespace(AuditTest.NS);
  }

  @AfterEach
  void stop() {
    if (front != null) {
      front.stop(0);
    }
    k8s.close();
  }

  private void serve(String plural, String itemsJson) {
    canned.put(
        "/apis/resource.k8s.io/v1/" + plural,
        ("{'kind':'List','items':[" + itemsJson + "]}").replace('\'', '"'));
  }

  private Fixtures.Run audit() throws IOException {
    return doctor("audit");
  }

  /** {@code hami-lock-doctor COMMAND} against the front server. */
  private Fixtures.Run doctor(String command) throws IOException {
    front = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    Map<String, Function<String, List<JsonNode>>> fromEmulator =
        Map.of(
            "/api/v1/nodes",
            r -> k8s.list("nodes", null),
            "/api/v1/pods",
            r -> k8s.list("pods", null));
    front.createContext(
        "/",
        ex -> {
          String path = ex.getRequestURI().getPath();
          if (canned.containsKey(path)) {
            answer(ex, 200, canned.get(path));
          } else if (fromEmulator.containsKey(path)) {
            ObjectNode list = new ObjectMapper().createObjectNode();
            list.putArray("items").addAll(fromEmulator.get(path).apply(path));
            answer(ex, 200, list.toString());
          } else {
            answer(ex, 404, "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
          }
        });
    front.start();
    String url = "http://127.0.0.1:" + front.getAddress().getPort();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        DoctorCommand.run(
            List.of(command),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            kubeconfig -> new ClientBuilder().setBasePath(url).build(),
            b -> b);
    return new Fixtures.Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static void answer(HttpExchange ex, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length);
    ex.getResponseBody().write(b);
    ex.close();
  }

  private static String slice(String uuid) {
    return "{'metadata':{'name':'node-a-gpu.nvidia.com'},'spec':{'driver':'gpu.nvidia.com',"
        + "'nodeName':'node-a','pool':{'name':'node-a','generation':1},'devices':[{'name':'gpu-0',"
        + "'attributes':{'uuid':{'string':'"
        + uuid
        + "'}}}]}}";
  }

  private static final String EXCLUSIVE_CLAIM =
      "{'metadata':{'namespace':'team-a','name':'whole-card','uid':'u1'},'status':{'allocation':"
          + "{'devices':{'results':[{'request':'gpu','driver':'gpu.nvidia.com','pool':'node-a',"
          + "'device':'gpu-0'}]}}}}";

  @Test
  void anExclusiveClaimOnACardAHamiPodUsesIsAnOverCommitNamingTheDraShare() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    k8s.create(
        AuditTest.hamiPod("a", "node-a", "node-a", AuditTest.entry(AuditTest.T4_UUID, 10000, 30))
            .toJson());
    serve("resourceslices", slice(AuditTest.T4_UUID));
    serve("resourceclaims", EXCLUSIVE_CLAIM);

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU01")
        .contains(
            "memory 25360/15360 MiB, cores 130/100 %, exclusive (100 % cores) shared by 2 slots"
                + " by team-a/a (10000 MiB, 30 %, 1 slot), DRA claims (15360 MiB, 100 %, 1 slot)")
        .contains("1 allocated ResourceClaim(s) on 1 ResourceSlice(s)")
        .contains("WARNING   AU06 card-in-hami-and-dra")
        .contains("published by DRA driver gpu.nvidia.com as device gpu-0");
  }

  @Test
  void issue28LocksShowsWhatDraClaimsAddToEachCard() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    serve("resourceslices", slice(AuditTest.T4_UUID));
    serve("resourceclaims", EXCLUSIVE_CLAIM);

    Fixtures.Run run = doctor("locks");

    assertThat(run.out())
        .as(run.err())
        .containsPattern("node-a +1 +15360/15360 +100/100 ")
        .contains("    dra: " + AuditTest.T4_UUID + ", DRA claims (15360 MiB, 100 %, 1 slot)");
  }

  @Test
  void aSliceListingARegisteredCardIsAWarningEvenWithNoClaim() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    serve("resourceslices", slice(AuditTest.T4_UUID));
    serve("resourceclaims", "");

    Fixtures.Run run = audit();

    assertThat(run.exit()).as("a warning only: " + run.out() + run.err()).isZero();
    assertThat(run.out())
        .contains("AU06")
        .contains("Node node-a card " + AuditTest.T4_UUID)
        .contains("audit: 0 errors, 1 warning, 0 info.");
  }

  @Test
  void aSliceOfAnotherCardIsNoWarning() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    serve("resourceslices", slice(AuditTest.OTHER_UUID));
    serve("resourceclaims", "");

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isZero();
    assertThat(run.out()).doesNotContain("AU06");
  }

  @Test
  void aClaimOnADeviceWhoseUuidTheNodeDoesNotRegisterMakesItsUsageUnknown() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    serve("resourceslices", slice(AuditTest.OTHER_UUID));
    serve("resourceclaims", EXCLUSIVE_CLAIM);

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
    assertThat(run.out()).contains("AU05").contains("dra-allocation-unresolved");
  }

  @Test
  void withoutResourceK8sIoTheAuditIsCleanAndSilentAboutDra() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    k8s.create(
        AuditTest.hamiPod("a", "node-a", "node-a", AuditTest.entry(AuditTest.T4_UUID, 10000, 30))
            .toJson());

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isZero();
    assertThat(run.err()).isEmpty();
    assertThat(run.out()).doesNotContain("DRA").doesNotContain("ResourceClaim");
  }
}
