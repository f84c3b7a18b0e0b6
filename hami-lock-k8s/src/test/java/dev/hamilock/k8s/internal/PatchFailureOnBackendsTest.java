package dev.hamilock.k8s.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.util.PatchUtils;
import java.util.Map;
import java.util.UUID;

/**
 * {@link ApiFailures#isPatchNotApplicable} against the answers of both backends (the emulator in
 * the default build, the real kube-apiserver with -Preal-apiserver): a JSON patch that does not
 * apply (failed {@code test}, missing path) is "not applicable", which NodeAnnotationLockStore
 * reads as "the lock is not as expected"; a patched object that fails validation or decoding is
 * not, and is reported as a rejection instead.
 */
class PatchFailureOnBackendsTest {
  private static final String P = "/metadata/annotations/hami.io~1mutex.lock";

  private static ApiException patch(KubeBackend k, String node, String format, String body) {
    CoreV1Api api = new CoreV1Api(k.apiClient());
    Throwable t =
        org.assertj.core.api.Assertions.catchThrowable(
            () ->
                PatchUtils.patch(
                    V1Node.class,
                    () -> api.patchNode(node, new V1Patch(body)).buildCall(null),
                    format,
                    k.apiClient()));
    assertThat(t)
        .as("patch %s on %s", body.length() > 200 ? body.substring(0, 200) : body, k.kind())
        .isInstanceOf(ApiException.class);
    return (ApiException) t;
  }

  private static String node(KubeBackend k, Map<String, String> annotations) {
    String name = "pf-" + UUID.randomUUID().toString().substring(0, 8);
    k.createNode(name, annotations);
    return name;
  }

  @BackendTest
  void failedTestsAndMissingPathsAreNotApplicable(KubeBackend k) {
    String held = node(k, Map.of("hami.io/mutex.lock", "holder"));
    String bare = node(k, Map.of());
    String other = node(k, Map.of("other", "x"));
    try {
      String[][] cases = {
        {
          held,
          "[{\"op\":\"test\",\"path\":\""
              + P
              + "\",\"value\":null},{\"op\":\"add\",\"path\":\""
              + P
              + "\",\"value\":\"me\"}]"
        },
        {
          held,
          "[{\"op\":\"test\",\"path\":\""
              + P
              + "\",\"value\":\"someone\"},{\"op\":\"remove\",\"path\":\""
              + P
              + "\"}]"
        },
        {other, "[{\"op\":\"test\",\"path\":\"" + P + "\",\"value\":\"me\"}]"},
        {other, "[{\"op\":\"remove\",\"path\":\"" + P + "\"}]"},
        {
          bare,
          "[{\"op\":\"test\",\"path\":\""
              + P
              + "\",\"value\":null},{\"op\":\"add\",\"path\":\""
              + P
              + "\",\"value\":\"me\"}]"
        },
        {bare, "[{\"op\":\"add\",\"path\":\"" + P + "\",\"value\":\"me\"}]"},
      };
      for (String[] c : cases) {
        ApiException e = patch(k, c[0], V1Patch.PATCH_FORMAT_JSON_PATCH, c[1]);
        assertThat(e.getCode()).as(c[1]).isEqualTo(422);
        assertThat(ApiFailures.isPatchNotApplicable(e))
            .as("%s answered %s", c[1], e.getResponseBody())
            .isTrue();
      }
      assertThat(
              k.get("nodes", null, held)
                  .orElseThrow()
                  .path("metadata")
                  .path("annotations")
                  .path("hami.io/mutex.lock")
                  .asText())
          .isEqualTo("holder");
    } finally {
      k.delete("nodes", null, held);
      k.delete("nodes", null, bare);
      k.delete("nodes", null, other);
    }
  }

  @BackendTest
  void invalidPatchedObjectsAreRejectionsNotFailedTests(KubeBackend k) {
    String n = node(k, Map.of("other", "x"));
    try {
      String[][] cases = {
        {
          V1Patch.PATCH_FORMAT_JSON_PATCH,
          "[{\"op\":\"test\",\"path\":\""
              + P
              + "\",\"value\":null},"
              + "{\"op\":\"add\",\"path\":\"/metadata/annotations/a~1b~1c\",\"value\":\"v\"}]"
        },
        {
          V1Patch.PATCH_FORMAT_JSON_PATCH,
          "[{\"op\":\"add\",\"path\":\"/metadata/annotations/hami.io~1-bad\",\"value\":\"v\"}]"
        },
        {
          V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH,
          "{\"metadata\":{\"annotations\":{\"big\":\"" + "x".repeat(262_145) + "\"}}}"
        },
        {V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH, "{\"metadata\":{\"annotations\":{\"n\":5}}}"},
      };
      for (String[] c : cases) {
        ApiException e = patch(k, n, c[0], c[1]);
        String shown = c[1].length() > 120 ? c[1].substring(0, 120) : c[1];
        assertThat(e.getCode()).as("%s answered %s", shown, e.getResponseBody()).isEqualTo(422);
        assertThat(ApiFailures.isPatchNotApplicable(e))
            .as("%s answered %s", shown, e.getResponseBody())
            .isFalse();
      }
      assertThat(k.get("nodes", null, n).orElseThrow().path("metadata").path("annotations").size())
          .isEqualTo(1);
    } finally {
      k.delete("nodes", null, n);
    }
  }
}
