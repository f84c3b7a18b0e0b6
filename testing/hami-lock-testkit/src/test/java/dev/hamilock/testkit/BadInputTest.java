package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.Fx.Outcome;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Bad input gets the apiserver's status codes, never a hang; a server-side exception is a 500
 * Status.
 */
class BadInputTest {
  @Test
  void malformedJsonCreateIs400() throws Exception {
    try (Fx fx = new Fx()) {
      Outcome o = fx.raw("POST", "/api/v1/nodes", "application/json", "{\"metadata\":");
      assertThat(o.code()).isEqualTo(400);
      assertThat(o.reason()).isEqualTo("BadRequest");
      assertThat(o.body().path("kind").asText()).isEqualTo("Status");
    }
  }

  @Test
  void nonStringAnnotationOnCreateIs400() throws Exception {
    try (Fx fx = new Fx()) {
      Outcome o =
          fx.raw(
              "POST",
              "/api/v1/nodes",
              "application/json",
              "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"a\":1}}}");
      assertThat(o.code()).isEqualTo(400);
      assertThat(fx.emu.get("nodes", null, "n")).isEmpty();
    }
  }

  @Test
  void wrongContentTypesAre415() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of());
      assertThat(fx.raw("POST", "/api/v1/nodes", "text/plain", "{}").code()).isEqualTo(415);
      Outcome patch = fx.raw("PATCH", "/api/v1/nodes/node-a", "application/json", "{}");
      assertThat(patch.code()).isEqualTo(415);
      assertThat(patch.reason()).isEqualTo("UnsupportedMediaType");
      Outcome smpOnCustomResource =
          fx.raw(
              "PATCH",
              "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/pg",
              "application/strategic-merge-patch+json",
              "{}");
      assertThat(smpOnCustomResource.code()).isEqualTo(415);
    }
  }

  @Test
  void unknownResourcesAre404() throws Exception {
    try (Fx fx = new Fx()) {
      Outcome o = fx.raw("GET", "/api/v1/foos", null, null);
      assertThat(o.code()).isEqualTo(404);
      assertThat(o.reason()).isEqualTo("NotFound");
      assertThat(fx.raw("GET", "/apis/example.com/v1/bars", null, null).code()).isEqualTo(404);
      assertThat(fx.raw("GET", "/api/v2/nodes", null, null).code()).isEqualTo(404);
      assertThat(fx.raw("GET", "/api/v1/nodes/a/b/c", null, null).code()).isEqualTo(404);
      assertThat(fx.raw("GET", "/openapi/v2", null, null).code()).isEqualTo(404);
      assertThat(fx.raw("GET", "/openapi/v3", null, null).code()).isEqualTo(404);
    }
  }

  @Test
  void badSelectorsAre400() throws Exception {
    try (Fx fx = new Fx()) {
      assertThat(fx.raw("GET", "/api/v1/nodes?labelSelector=a%20in%20(b", null, null).code())
          .isEqualTo(400);
      assertThat(fx.raw("GET", "/api/v1/nodes?labelSelector=-bad-key", null, null).code())
          .isEqualTo(400);
      Outcome field = fx.raw("GET", "/api/v1/nodes?fieldSelector=spec.nodeName%3Dx", null, null);
      assertThat(field.code()).isEqualTo(400);
      assertThat(field.body().path("message").asText())
          .isEqualTo("field label not supported: spec.nodeName");
      assertThat(fx.raw("GET", "/api/v1/pods?fieldSelector=justtext", null, null).code())
          .isEqualTo(400);
      assertThat(fx.raw("GET", "/api/v1/pods?watch=true&labelSelector=!", null, null).code())
          .isEqualTo(400);
    }
  }

  @Test
  void wrongMethodIs405AndNameMismatchIs400() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of());
      assertThat(fx.raw("PUT", "/api/v1/nodes", "application/json", "{}").code()).isEqualTo(405);
      Outcome o =
          fx.raw(
              "PUT",
              "/api/v1/nodes/node-a",
              "application/json",
              "{\"metadata\":{\"name\":\"other\"}}");
      assertThat(o.code()).isEqualTo(400);
      assertThat(o.body().path("message").asText()).contains("does not match the name on the URL");
    }
  }

  @Test
  void throwingHookBecomes500StatusAndTheServerKeepsServing() throws Exception {
    try (Fx fx = new Fx()) {
      fx.emu.createNode("node-a", Map.of());
      FaultHandle h =
          fx.emu.addFault(
              FaultRule.matching()
                  .verb("get")
                  .resource("nodes")
                  .times(1)
                  .invoke(
                      r -> {
                        throw new IllegalStateException("deliberate failure for " + r.path());
                      }));
      Outcome o;
      try (LogCapture log = LogCapture.start()) {
        o = fx.raw("GET", "/api/v1/nodes/node-a", null, null);
        assertThat(
                log.expect(
                    "WARN dev\\.hamilock\\.testkit\\.Frontend - emulator request GET "
                        + "/api/v1/nodes/node-a failed"))
            .singleElement()
            .asString()
            .contains("IllegalStateException: deliberate failure");
      }
      assertThat(o.code()).isEqualTo(500);
      assertThat(o.reason()).isEqualTo("InternalError");
      assertThat(o.body().path("message").asText())
          .contains("deliberate failure for /api/v1/nodes/node-a");
      assertThat(h.hits()).isEqualTo(1);
      assertThat(fx.raw("GET", "/api/v1/nodes/node-a", null, null).code()).isEqualTo(200);
    }
  }
}
