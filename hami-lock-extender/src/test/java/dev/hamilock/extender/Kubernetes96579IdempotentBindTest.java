package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderBindingResult;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * kubernetes#96579 over the extender's bind verb: kube-scheduler retries a bind that went through;
 * the answer is an empty error, not {@code pod default/w1 is already bound to node …}.
 */
class Kubernetes96579IdempotentBindTest {
  static final List<String> ALL = List.of("node-a", "node-b", "node-c");

  @Test
  void aRetriedBindAnswersEmptyErrorAndABindToAnotherNodeAnError() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ObjectNode pod = t.addGangWorker("w1", 3000);
    String node =
        t.extender.filter(ExtenderArgs.ofNodeNames(pod, ALL)).nodeNames().orElseThrow().get(0);
    assertThat(t.extender.bind(new ExtenderBindingArgs("w1", "default", "uid-w1", node)))
        .isEqualTo(ExtenderBindingResult.OK);

    ExtenderBindingResult retry =
        t.extender.bind(new ExtenderBindingArgs("w1", "default", "uid-w1", node));

    assertThat(retry).isEqualTo(ExtenderBindingResult.OK);
    assertThat(retry.error()).isEmpty();
    String other = node.equals("node-a") ? "node-b" : "node-a";
    assertThat(t.extender.bind(new ExtenderBindingArgs("w1", "default", "uid-w1", other)).error())
        .contains("already bound to node " + node);
  }
}
