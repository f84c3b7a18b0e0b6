package dev.hamilock.bind.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.usage.DraObjects;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 2: the DRA reads of the bind's re-fit ({@link KubernetesWire.DraReads#read} with an
 * executor) issue the ResourceClaims' LIST beside the ResourceSlices'; without an executor, in
 * sequence as before; a decorator is never bypassed ({@link ForwardingCluster}).
 */
class Issue25SideBySideDraReadsTest {
  static final ObjectMapper JSON = new ObjectMapper();

  /** Answers discovery and both LISTs with empty lists; records each path. */
  static final class Server implements KubernetesWire.Get {
    final List<String> calls = new ArrayList<>();
    ClusterException slicesFail;
    Runnable onSlices = () -> {};
    boolean absent; // resource.k8s.io/v1 answers 404
    boolean claimsAbsent; // only the ResourceClaims' LIST answers 404

    @Override
    public Optional<JsonNode> get(String what, String path, Map<String, String> query)
        throws ClusterException {
      String resource = path.substring(path.lastIndexOf('/') + 1);
      calls.add(resource);
      if (absent || (claimsAbsent && resource.equals("resourceclaims"))) {
        return Optional.empty();
      }
      if (resource.equals("resourceslices")) {
        onSlices.run();
        if (slicesFail != null) {
          throw slicesFail;
        }
      }
      return Optional.of(JSON.createObjectNode().set("items", JSON.createArrayNode()));
    }
  }

  @Test
  void theClaimsAreListedBesideTheSlicesAndCountedAsInSequence() throws Exception {
    Server server = new Server();
    KubernetesWire.DraReads dra = new KubernetesWire.DraReads(server);
    dra.read(List.of("gpu-1"), false, null); // discovery
    server.calls.clear();
    List<Runnable> forked = new ArrayList<>();
    Executor notYet = forked::add; // takes the task, starts it later
    List<Integer> forkedWhenSlicesListed = new ArrayList<>();
    server.onSlices = () -> forkedWhenSlicesListed.add(forked.size());

    assertThat(dra.read(List.of("gpu-1"), false, notYet)).isEqualTo(DraObjects.NONE);

    assertThat(forkedWhenSlicesListed).containsExactly(1);
    assertThat(server.calls).containsExactly("resourceslices", "resourceclaims"); // run by join
  }

  /**
   * An API server that did not serve {@code resource.k8s.io/v1} is asked again after {@link
   * KubernetesWire.DraReads#REPROBE}, not never: one that starts serving it (an upgrade, a feature
   * gate) has its claims counted from then on; within the minute, no request.
   */
  @Test
  void anAbsentDraApiIsAskedAboutAgainAfterAMinuteNotEveryBindAndNotNever() throws Exception {
    Server server = new Server();
    server.absent = true;
    long[] now = {0};
    KubernetesWire.DraReads dra = new KubernetesWire.DraReads(server, () -> now[0]);
    assertThat(dra.read(List.of("gpu-1"), false, null)).isEqualTo(DraObjects.NONE);
    assertThat(server.calls).containsExactly("v1");
    server.absent = false;
    now[0] = KubernetesWire.DraReads.REPROBE.toNanos() - 1;
    dra.read(List.of("gpu-1"), false, null);
    assertThat(server.calls).as("no request within the minute").containsExactly("v1");

    now[0]++;
    dra.read(List.of("gpu-1"), false, null);

    assertThat(server.calls).containsExactly("v1", "v1", "resourceslices", "resourceclaims");
  }

  /**
   * Breaker (fc4fd47): a LIST answered 404 after discovery said {@code resource.k8s.io/v1} is
   * served (an HA control plane mid-upgrade: the discovery GET reached a new kube-apiserver, the
   * LIST an old one) was taken as "not served": {@link DraObjects#NONE} for a minute (before
   * fc4fd47, for ever), every ResourceClaim uncounted, so a bind could take a card a claim holds.
   * The read fails (retryable) and the next one asks discovery again: gone there too, absent.
   */
  @Test
  void aListAnswered404AfterDiscoverySaidServedFailsTheReadInsteadOfCountingNoClaim()
      throws Exception {
    Server server = new Server();
    KubernetesWire.DraReads dra = new KubernetesWire.DraReads(server);
    dra.read(List.of("gpu-1"), false, null); // discovery: served
    server.calls.clear();
    server.claimsAbsent = true;

    assertThatThrownBy(() -> dra.read(List.of("gpu-1"), false, null))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> assertThat(e.answer().kind()).isEqualTo(ClusterException.Kind.UNAVAILABLE))
        .hasMessageContaining("LIST resourceclaims");
    server.absent = true;
    assertThat(dra.read(List.of("gpu-1"), false, null)).isEqualTo(DraObjects.NONE);
    assertThat(server.calls).containsExactly("resourceslices", "resourceclaims", "v1");
  }

  @Test
  void withoutAnExecutorAFailedSliceListIsTheErrorAndNoClaimIsListed() throws Exception {
    Server server = new Server();
    KubernetesWire.DraReads dra = new KubernetesWire.DraReads(server);
    dra.read(List.of("gpu-1"), false, null);
    server.calls.clear();
    server.slicesFail =
        new ClusterException(ClusterException.Kind.REJECTED, "LIST resourceslices: 403", null);

    assertThatThrownBy(() -> dra.read(List.of("gpu-1"), false, null)).isSameAs(server.slicesFail);
    assertThat(server.calls).containsExactly("resourceslices");
  }

  @Test
  void aDecoratorOfReadDraAnswersTheSideBySideReadAndAPlainOneForwardsTheExecutor()
      throws Exception {
    List<Executor> forwarded = new ArrayList<>();
    ClusterReader delegate =
        new ForwardingCluster(InMemoryCluster.create(), null) {
          @Override
          public DraObjects readDra(Collection<String> nodes, Executor executor) {
            forwarded.add(executor);
            return DraObjects.NONE;
          }
        };
    DraObjects changed = new DraObjects(List.of(), List.of());
    ClusterReader changing =
        new ForwardingCluster(delegate, null) {
          @Override
          public DraObjects readDra(Collection<String> nodes) {
            return changed;
          }
        };
    Executor steps = Runnable::run;

    assertThat(changing.readDra(List.of("gpu-1"), steps)).isSameAs(changed);
    assertThat(forwarded).isEmpty();
    assertThat(new ForwardingCluster(delegate, null) {}.readDra(List.of("gpu-1"), steps))
        .isEqualTo(DraObjects.NONE);
    assertThat(forwarded).containsExactly(steps);
  }
}
