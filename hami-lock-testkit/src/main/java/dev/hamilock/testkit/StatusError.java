package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * An apiserver error answered as a {@code v1.Status} (kind Status, status Failure). Messages and
 * reasons follow {@code k8s.io/apimachinery/pkg/api/errors/errors.go}.
 */
final class StatusError extends Exception {
  private static final long serialVersionUID = 1L;

  final int code;
  final String reason;
  final transient ObjectNode details;

  private StatusError(int code, String reason, String message, ObjectNode details) {
    super(message, null, false, false);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  private static ObjectNode details(ResourceType rt, String name) {
    ObjectNode d = JsonNodeFactory.instance.objectNode();
    if (name != null && !name.isEmpty()) {
      d.put("name", name);
    }
    if (rt != null) {
      if (!rt.group().isEmpty()) {
        d.put("group", rt.group());
      }
      d.put("kind", rt.plural());
    }
    return d;
  }

  static StatusError notFound(ResourceType rt, String name) {
    return new StatusError(404, "NotFound", rt.qualifiedResource() + " \"" + name + "\" not found",
        details(rt, name));
  }

  static StatusError alreadyExists(ResourceType rt, String name) {
    return new StatusError(409, "AlreadyExists",
        rt.qualifiedResource() + " \"" + name + "\" already exists", details(rt, name));
  }

  /** 409 Conflict: {@code Operation cannot be fulfilled on <resource> "<name>": <detail>}. */
  static StatusError conflict(String qualifiedResource, ObjectNode details, String name, String detail) {
    return new StatusError(409, "Conflict",
        "Operation cannot be fulfilled on " + qualifiedResource + " \"" + name + "\": " + detail,
        details);
  }

  static StatusError conflict(ResourceType rt, String name, String detail) {
    return conflict(rt.qualifiedResource(), details(rt, name), name, detail);
  }

  static StatusError optimisticLock(ResourceType rt, String name) {
    return conflict(rt, name,
        "the object has been modified; please apply your changes to the latest version and try again");
  }

  /** 409 from a storage precondition (uid or resourceVersion), with the StorageError text. */
  static StatusError preconditionFailed(ResourceType rt, String ns, String name, String detail) {
    return conflict(rt, name, "StorageError: invalid object, Code: 4, Key: "
        + rt.storageKey(ns, name) + ", ResourceVersion: 0, AdditionalErrorMsg: " + detail);
  }

  /** 422 Invalid for one field: {@code Kind "name" is invalid: field: detail}. */
  static StatusError invalid(ResourceType rt, String name, String field, String detail) {
    ObjectNode d = details(null, name);
    if (!rt.group().isEmpty()) {
      d.put("group", rt.group());
    }
    d.put("kind", rt.kind());
    ObjectNode cause = d.putArray("causes").addObject();
    cause.put("reason", "FieldValueInvalid");
    cause.put("message", detail);
    cause.put("field", field);
    return new StatusError(422, "Invalid",
        rt.qualifiedKind() + " \"" + name + "\" is invalid: " + field + ": " + detail, d);
  }

  /** 422 as patch.go answers a JSON patch that does not apply (details are empty). */
  static StatusError patchRejected() {
    return new StatusError(422, "Invalid",
        "the server rejected our request due to an error in our request",
        JsonNodeFactory.instance.objectNode());
  }

  static StatusError badRequest(String message) {
    return new StatusError(400, "BadRequest", message, null);
  }

  static StatusError unsupportedMediaType(String contentType, String accepted) {
    return new StatusError(415, "UnsupportedMediaType", "the body of the request was in an unknown"
        + " format - accepted media types include: " + accepted, null);
  }

  static StatusError notFoundPath() {
    return new StatusError(404, "NotFound", "the server could not find the requested resource",
        JsonNodeFactory.instance.objectNode());
  }

  static StatusError methodNotAllowed(String verb) {
    return new StatusError(405, "MethodNotAllowed",
        "the server does not allow this method on the requested resource", JsonNodeFactory.instance.objectNode());
  }

  static StatusError expired(String message) {
    return new StatusError(410, "Expired", message, null);
  }

  static StatusError internal(Throwable t) {
    ObjectNode d = JsonNodeFactory.instance.objectNode();
    d.putArray("causes").addObject().put("message", String.valueOf(t));
    return new StatusError(500, "InternalError", "Internal error occurred: " + t, d);
  }

  static StatusError custom(int code, String reason, String message) {
    return new StatusError(code, reason, message, null);
  }

  /** @return the v1.Status JSON for this error */
  ObjectNode toStatus() {
    ObjectNode s = JsonNodeFactory.instance.objectNode();
    s.put("kind", "Status");
    s.put("apiVersion", "v1");
    s.putObject("metadata");
    s.put("status", "Failure");
    s.put("message", getMessage());
    if (reason != null && !reason.isEmpty()) {
      s.put("reason", reason);
    }
    if (details != null) {
      s.set("details", details.deepCopy());
    }
    s.put("code", code);
    return s;
  }
}
