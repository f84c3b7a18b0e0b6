package dev.hamilock.k8s.bind;

import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.RealApiServer;
import java.time.Duration;
import org.junit.jupiter.api.Tag;

/**
 * {@link Issue28DraScenarios} on the real kube-apiserver v1.37, which serves {@code
 * resource.k8s.io/v1} by default. Run: {@code testing/realcluster/build}, then {@code mvn -B -pl
 * hami-lock-k8s-bind -am verify -Preal-apiserver -Dtest=Issue28RealDraTest
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Tag("real-apiserver")
class Issue28RealDraTest extends Issue28DraScenarios {
  @Override
  KubeBackend start() {
    return RealApiServer.builder().clientReadTimeout(Duration.ofSeconds(30)).start();
  }
}
