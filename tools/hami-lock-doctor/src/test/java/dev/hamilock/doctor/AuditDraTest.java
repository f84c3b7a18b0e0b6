package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import java.io.IOException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code audit} and the {@code locks} summary count DRA usage (issue 28 item 3), on an emulator
 * serving {@code resource.k8s.io/v1} (and one that does not, as a cluster without DRA). Objects as
 * NVIDIA's DRA driver publishes them (driver {@code gpu.nvidia.com}, pool = node name, device
 * {@code gpu-<minor>}, attribute {@code uuid}).
 */
class AuditDraTest {
  private ApiServerEmulator k8s;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.builder().servingDra(true).start();
    k8s.createNamespace(AuditTest.NS);
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  /** Creates the objects of {@code itemsJson} (comma-separated, quotes as ') as {@code kind}. */
  private void serve(String kind, String itemsJson) throws IOException {
    for (JsonNode item : new ObjectMapper().readTree(("[" + itemsJson + "]").replace('\'', '"'))) {
      ((ObjectNode) item).put("apiVersion", "resource.k8s.io/v1").put("kind", kind);
      k8s.create(item);
    }
  }

  private Fixtures.Run audit() {
    return doctor("audit");
  }

  /** {@code hami-lock-doctor COMMAND} against the emulator. */
  private Fixtures.Run doctor(String command) {
    return Fixtures.run(k8s, b -> b, command);
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

  /**
   * Breaker (beside fc4fd47's DraReads fix): the ResourceSlices' LIST answered 404 while the
   * ResourceClaims' was served (an HA control plane mid-upgrade) read as a cluster without DRA: no
   * note, the exclusive claim uncounted and the over-commit it makes missed, exit 0. It says so.
   */
  @Test
  void aSliceListAnswered404BesideServedClaimsIsSaidNotTakenForNoDra() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    k8s.create(
        AuditTest.hamiPod("a", "node-a", "node-a", AuditTest.entry(AuditTest.T4_UUID, 10000, 30))
            .toJson());
    serve("ResourceSlice", slice(AuditTest.T4_UUID));
    serve("ResourceClaim", EXCLUSIVE_CLAIM);
    k8s.addFault(
        FaultRule.matching()
            .verb("list")
            .pathMatching("/apis/resource.k8s.io/v1/resourceslices")
            .respondStatus(404, "NotFound", "the server could not find the requested resource"));

    Fixtures.Run run = audit();

    assertThat(run.out())
        .as(run.out() + run.err())
        .contains("DRA usage not counted: LIST resourceslices answered 404");
  }

  @Test
  void anExclusiveClaimOnACardAHamiPodUsesIsAnOverCommitNamingTheDraShare() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    k8s.create(
        AuditTest.hamiPod("a", "node-a", "node-a", AuditTest.entry(AuditTest.T4_UUID, 10000, 30))
            .toJson());
    serve("ResourceSlice", slice(AuditTest.T4_UUID));
    serve("ResourceClaim", EXCLUSIVE_CLAIM);

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
    serve("ResourceSlice", slice(AuditTest.T4_UUID));
    serve("ResourceClaim", EXCLUSIVE_CLAIM);

    Fixtures.Run run = doctor("locks");

    assertThat(run.out())
        .as(run.err())
        .containsPattern("node-a +1 +15360/15360 +100/100 ")
        .contains("    dra: " + AuditTest.T4_UUID + ", DRA claims (15360 MiB, 100 %, 1 slot)");
  }

  @Test
  void aSliceListingARegisteredCardIsAWarningEvenWithNoClaim() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    serve("ResourceSlice", slice(AuditTest.T4_UUID));
    serve("ResourceClaim", "");

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
    serve("ResourceSlice", slice(AuditTest.OTHER_UUID));
    serve("ResourceClaim", "");

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isZero();
    assertThat(run.out()).doesNotContain("AU06");
  }

  @Test
  void aClaimOnADeviceWhoseUuidTheNodeDoesNotRegisterMakesItsUsageUnknown() throws IOException {
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    serve("ResourceSlice", slice(AuditTest.OTHER_UUID));
    serve("ResourceClaim", EXCLUSIVE_CLAIM);

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
    assertThat(run.out()).contains("AU05").contains("dra-allocation-unresolved");
  }

  @Test
  void withoutResourceK8sIoTheAuditIsCleanAndSilentAboutDra() throws IOException {
    k8s.close();
    k8s = ApiServerEmulator.start();
    k8s.createNamespace(AuditTest.NS);
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
