package dev.hamilock.core.annotation;

import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import dev.hamilock.core.store.CasResult;
import java.util.Objects;
import java.util.Optional;

/** One conditional write of {@link AnnotationLockStore}: what it is, its patch and its outcome. */
final class AnnotationWrite {
  enum Kind {
    CREATE,
    REPLACE,
    DELETE
  }

  final Kind kind;
  final String node;
  final String key;
  final String expected;
  final String value;
  boolean ambiguous; // an earlier attempt of this operation had an unknown outcome

  AnnotationWrite(Kind kind, String node, String key, String expected, String value) {
    this.kind = kind;
    this.node = node;
    this.key = key;
    this.expected = expected;
    this.value = value;
  }

  String describe() {
    return switch (kind) {
      case CREATE -> "create lock " + key + "=\"" + value + "\" on node " + node;
      case REPLACE ->
          "replace lock " + key + "=\"" + expected + "\" by \"" + value + "\" on node " + node;
      case DELETE -> "delete lock " + key + "=\"" + expected + "\" on node " + node;
    };
  }

  String body() {
    return switch (kind) {
      case CREATE -> AnnotationPatches.create(key, value);
      case REPLACE -> AnnotationPatches.replace(key, expected, value);
      case DELETE -> AnnotationPatches.delete(key, expected);
    };
  }

  /** Decides an ambiguous write from the value stored now. */
  CasResult decideFromStored(Optional<String> current, Failure cause) throws NotApplied {
    String applied = kind == Kind.DELETE ? null : value;
    String before = kind == Kind.CREATE ? null : expected;
    if (Objects.equals(current.orElse(null), applied)) {
      return CasResult.written(); // for a delete: "the value is gone", all a release needs
    }
    if (Objects.equals(current.orElse(null), before)) {
      throw new NotApplied(describe() + ": not applied (" + cause.getMessage() + ")", cause, false);
    }
    return CasResult.notWritten(current);
  }

  /** The write was certainly not applied (or was re-read as not applied): repeat it. */
  static final class NotApplied extends Exception {
    private static final long serialVersionUID = 1L;
    final transient Failure failure;
    final boolean lostRace; // another writer changed the node under our merge patch (409)

    NotApplied(String message, Failure failure, boolean lostRace) {
      super(message, null, false, false);
      this.failure = failure;
      this.lostRace = lostRace;
    }
  }
}
