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
    return new StatusError(
        404, "NotFound", rt.qualifiedResource() + " \"" + name + "\" not found", details(rt, name));
  }

  static StatusError alreadyExists(ResourceType rt, String name) {
    return new StatusError(
        409,
        "AlreadyExists",
        rt.qualifiedResource() + " \"" + name + "\" already exists",
        details(rt, name));
  }

  /** 409 Conflict: {@code Operation cannot be fulfilled on <resource> "<name>": <detail>}. */
  static StatusError conflict(
      String qualifiedResource, ObjectNode details, String name, String detail) {
    return new StatusError(
        409,
        "Conflict",
        "Operation cannot be fulfilled on " + qualifiedResource + " \"" + name + "\": " + detail,
        details);
  }

  static StatusError conflict(ResourceType rt, String name, String detail) {
    return conflict(rt.qualifiedResource(), details(rt, name), name, detail);
  }

  static StatusError optimisticLock(ResourceType rt, String name) {
    return conflict(
        rt,
        name,
        "the object has been modified; please apply your changes to the latest version and try again");
  }

  /**
   * 409 from a DELETE's preconditions, as the registry's precondition check answers it (details
   * name the Kind, not the resource).
   *
   * @param what {@code UID} or {@code ResourceVersion}
   * @param why {@code modified} (resourceVersion) or {@code deleted and then recreated} (uid)
   */
  static StatusError deletePreconditionFailed(
      ResourceType rt, String name, String what, String given, String current, String why) {
    ObjectNode d = details(null, name);
    if (!rt.group().isEmpty()) {
      d.put("group", rt.group());
    }
    d.put("kind", rt.kind());
    return new StatusError(
        409,
        "Conflict",
        "Operation cannot be fulfilled on "
            + rt.qualifiedKind()
            + " \""
            + name
            + "\": the "
            + what
            + " in the precondition ("
            + given
            + ") does not match the "
            + what
            + " in record ("
            + current
            + "). The object might have been "
            + why,
        d);
  }

  /**
   * 422 for a patched object that does not decode into its Go type (a non-string annotation value,
   * ...): patch.go's {@code errors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
   * field.Invalid(field.NewPath("patch"), patchedJS, err.Error())})}: empty kind and name, the
   * patched object quoted in the message.
   */
  static StatusError patchedObjectUndecodable(String patchedJson, String error) {
    ObjectNode d = JsonNodeFactory.instance.objectNode();
    ObjectNode cause = d.putArray("causes").addObject();
    String detail = "Invalid value: " + goQuote(patchedJson) + ": " + error;
    cause.put("reason", "FieldValueInvalid");
    cause.put("message", detail);
    cause.put("field", "patch");
    return new StatusError(422, "Invalid", " \"\" is invalid: patch: " + detail, d);
  }

  private static String goQuote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /** 409 from a storage precondition (uid or resourceVersion), with the StorageError text. */
  static StatusError preconditionFailed(ResourceType rt, String ns, String name, String detail) {
    return conflict(
        rt,
        name,
        "StorageError: invalid object, Code: 4, Key: "
            + rt.storageKey(ns, name)
            + ", ResourceVersion: 0, AdditionalErrorMsg: "
            + detail);
  }

  /** 422 Invalid for one field: {@code Kind "name" is invalid: field: detail}. */
  static StatusError invalid(ResourceType rt, String name, String field, String detail) {
    return invalid(rt, name, field, detail, "FieldValueInvalid");
  }

  /**
   * 422 Invalid for one field with the given cause reason ({@code FieldValueInvalid}, {@code
   * FieldValueForbidden}, {@code FieldValueTooLong}, ...), as {@code errors.NewInvalid}.
   */
  static StatusError invalid(
      ResourceType rt, String name, String field, String detail, String causeReason) {
    ObjectNode d = details(null, name);
    if (!rt.group().isEmpty()) {
      d.put("group", rt.group());
    }
    d.put("kind", rt.kind());
    ObjectNode cause = d.putArray("causes").addObject();
    cause.put("reason", causeReason);
    cause.put("message", detail);
    cause.put("field", field);
    return new StatusError(
        422,
        "Invalid",
        rt.qualifiedKind() + " \"" + name + "\" is invalid: " + field + ": " + detail,
        d);
  }

  /** 422 as patch.go answers a JSON patch that does not apply (details are empty). */
  static StatusError patchRejected() {
    return new StatusError(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        JsonNodeFactory.instance.objectNode());
  }

  static StatusError badRequest(String message) {
    return new StatusError(400, "BadRequest", message, null);
  }

  static StatusError unsupportedMediaType(String contentType, String accepted) {
    // kube-apiserver's PATCH handler answers any content type it has no patcher for so
    return new StatusError(
        415,
        "UnsupportedMediaType",
        "415: Unsupported Media Type",
        JsonNodeFactory.instance.objectNode());
  }

  static StatusError notFoundPath() {
    return new StatusError(
        404,
        "NotFound",
        "the server could not find the requested resource",
        JsonNodeFactory.instance.objectNode());
  }

  static StatusError methodNotAllowed(String verb) {
    return new StatusError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        JsonNodeFactory.instance.objectNode());
  }

  static StatusError expired(String message) {
    return new StatusError(410, "Expired", message, null);
  }

  static StatusError internal(Throwable t) {
    ObjectNode d = JsonNodeFactory.instance.objectNode();
    d.putArray("causes").addObject().put("message", String.valueOf(t));
    return new StatusError(500, "InternalError", "Internal error occurred: " + t, d);
  }

  /** The eviction subresource's refusal by a PodDisruptionBudget ({@code eviction.go}). */
  static StatusError tooManyRequests(int retryAfterSeconds, String cause) {
    ObjectNode d = JsonNodeFactory.instance.objectNode();
    d.putArray("causes").addObject().put("reason", "DisruptionBudget").put("message", cause);
    if (retryAfterSeconds > 0) {
      d.put("retryAfterSeconds", retryAfterSeconds);
    }
    return new StatusError(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
        d);
  }

  static StatusError custom(int code, String reason, String message) {
    return new StatusError(code, reason, message, null);
  }

  /**
   * @return the v1.Status JSON for this error
   */
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
