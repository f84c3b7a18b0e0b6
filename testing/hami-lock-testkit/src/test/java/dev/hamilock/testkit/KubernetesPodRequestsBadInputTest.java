package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A missing or foreign {@code podrequests} binary is refused with the fix in the message. */
class KubernetesPodRequestsBadInputTest {
  @TempDir Path dir;

  @Test
  void aMissingBinarySaysToRunTheBuildScript() {
    Path missing = dir.resolve("podrequests");
    assertThatThrownBy(() -> KubernetesPodRequests.locate(missing))
        .isInstanceOf(RealApiServerException.class)
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("run testing/realcluster/build");
  }

  @Test
  void aBinaryThatIsNotPodRequestsIsForeign() throws Exception {
    Path other = dir.resolve("podrequests");
    Files.writeString(other, "#!/bin/sh\necho realcluster kubernetes v1.37.2 etcd v3.7.0\n");
    Files.setPosixFilePermissions(other, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertThatThrownBy(() -> KubernetesPodRequests.locate(other))
        .isInstanceOf(RealApiServerException.class)
        .hasMessageContaining("stale or foreign podrequests binary " + other)
        .hasMessageContaining("realcluster kubernetes v1.37.2");
  }
}
