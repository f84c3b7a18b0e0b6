package dev.hamilock.testkit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.hamilock.testkit.jsonpatch.JsonPatch;
import dev.hamilock.testkit.jsonpatch.MalformedPatchException;
import dev.hamilock.testkit.selector.FieldSelector;
import dev.hamilock.testkit.selector.LabelSelector;
import dev.hamilock.testkit.selector.SelectorParseException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side: routing of kube-apiserver URL shapes, content negotiation, request counting,
 * latency and fault injection, watch streaming. Every request gets an answer; an unexpected
 * exception becomes a 500 InternalError Status.
 */
final class Frontend implements HttpHandler {
  private static final Logger LOG = LoggerFactory.getLogger(Frontend.class);
  static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String JSON_TYPE = "application/json";

  private final ApiServerEmulator emulator;
  private final Store store;

  Frontend(ApiServerEmulator emulator, Store store) {
    this.emulator = emulator;
    this.store = store;
  }

  /** A parsed request target. {@code rt} is null for non-resource paths. */
  record Route(
      ResourceType rt,
      String namespace,
      String name,
      String subresource,
      String verb,
      String resource,
      boolean collection) {}

  record Response(int code, byte[] body, String contentType) {
    static Response json(int code, JsonNode body) {
      try {
        return new Response(code, MAPPER.writeValueAsBytes(body), JSON_TYPE);
      } catch (JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }

    static Response error(StatusError e) {
      return json(e.code, e.toStatus());
    }

    static Response text(int code, String text) {
      return new Response(code, text.getBytes(StandardCharsets.UTF_8), "text/plain; charset=utf-8");
    }
  }

  private static final class NotFoundPath extends Exception {
    private static final long serialVersionUID = 1L;
    final boolean api;

    NotFoundPath(boolean api) {
      super(null, null, false, false);
      this.api = api;
    }
  }

  // ------------------------------------------------------------------ entry point

  @Override
  public void handle(HttpExchange ex) {
    try {
      handleUnsafe(ex);
    } catch (InterruptedException e) { // emulator shutting down
      LOG.debug(
          "emulator request {} {} interrupted by close()",
          ex.getRequestMethod(),
          ex.getRequestURI());
      Thread.currentThread().interrupt();
    } catch (IOException e) { // the client went away (timed out, closed): nothing to answer
      LOG.debug(
          "emulator request {} {}: client gone ({})",
          ex.getRequestMethod(),
          ex.getRequestURI(),
          e.toString()); // no stack: a client going away is no emulator fault
    } catch (Throwable t) { // every request gets an answer, even on a bug
      LOG.warn("emulator request {} {} failed", ex.getRequestMethod(), ex.getRequestURI(), t);
      try {
        send(ex, Response.error(StatusError.internal(t)));
      } catch (IOException | RuntimeException ignored) {
        // headers may already be sent (watch); the connection is closed below
      }
    } finally {
      ex.close();
    }
  }

  private void handleUnsafe(HttpExchange ex) throws Exception {
    String method = ex.getRequestMethod().toUpperCase(Locale.ROOT);
    String path = ex.getRequestURI().getRawPath();
    String rawQuery = Optional.ofNullable(ex.getRequestURI().getRawQuery()).orElse("");
    Map<String, String> q = query(rawQuery);
    byte[] body = ex.getRequestBody().readAllBytes();

    Route route;
    try {
      route = route(method, path, q);
    } catch (NotFoundPath nf) {
      emulator.count(new RequestKey(method.toLowerCase(Locale.ROOT), path));
      send(
          ex,
          nf.api
              ? Response.error(StatusError.notFoundPath())
              : Response.text(404, "404 page not found\n"));
      return;
    }
    emulator.count(new RequestKey(route.verb(), route.resource()));
    RequestInfo info =
        new RequestInfo(
            method,
            route.verb(),
            route.resource(),
            path,
            rawQuery,
            Optional.ofNullable(route.namespace()),
            Optional.ofNullable(route.name()));

    long latency = emulator.latency().sampleNanos();
    if (latency > 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(latency);
    }
    Optional<FaultRule> fault = emulator.takeFault(info);
    FaultRule.Action action = fault.map(FaultRule::action).orElse(null);
    if (action != null) {
      switch (action) {
        case RESPOND -> {
          FaultRule f = fault.get();
          send(ex, new Response(f.status(), f.body().getBytes(StandardCharsets.UTF_8), JSON_TYPE));
          return;
        }
        case DELAY -> Thread.sleep(fault.get().delay().toMillis());
        case CLOSE_CONNECTION -> {
          return; // ex.close() without a response closes the connection
        }
        case INVOKE -> fault.get().hook().accept(info);
        default -> {}
      }
    }

    if (route.rt() != null && route.verb().equals("watch")) {
      if (action == FaultRule.Action.DROP_RESPONSE_AFTER_APPLY) {
        return;
      }
      serveWatch(ex, route, q);
      return;
    }
    Response response;
    try {
      response = route.rt() == null ? nonResource(ex, path) : resource(ex, route, q, body);
    } catch (StatusError e) {
      response = Response.error(e);
    }
    if (action == FaultRule.Action.DROP_RESPONSE_AFTER_APPLY) {
      return;
    }
    if (action == FaultRule.Action.DELAY_AFTER_APPLY) {
      Thread.sleep(fault.get().delay().toMillis());
    }
    if (action == FaultRule.Action.RESPOND_AFTER_APPLY) {
      FaultRule f = fault.get();
      response = new Response(f.status(), f.body().getBytes(StandardCharsets.UTF_8), JSON_TYPE);
    }
    send(ex, response);
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> q = new HashMap<>();
    if (raw.isEmpty()) {
      return q;
    }
    for (String part : raw.split("&")) {
      if (part.isEmpty()) {
        continue;
      }
      int eq = part.indexOf('=');
      String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
      String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
      q.putIfAbsent(k, v);
    }
    return q;
  }

  private static void send(HttpExchange ex, Response r) throws IOException {
    ex.getResponseHeaders().set("Content-Type", r.contentType());
    ex.getResponseHeaders().set("Cache-Control", "no-cache, private");
    if (r.body().length == 0) {
      ex.sendResponseHeaders(r.code(), -1);
      return;
    }
    ex.sendResponseHeaders(r.code(), r.body().length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(r.body());
    }
  }

  // ------------------------------------------------------------------ routing

  private Route route(String method, String path, Map<String, String> q) throws NotFoundPath {
    String[] segs =
        java.util.Arrays.stream(path.split("/"))
            .filter(s -> !s.isEmpty())
            .map(s -> URLDecoder.decode(s, StandardCharsets.UTF_8))
            .toArray(String[]::new);
    if (segs.length == 0 || !(segs[0].equals("api") || segs[0].equals("apis"))) {
      return new Route(null, null, null, null, method.toLowerCase(Locale.ROOT), path, false);
    }
    String group;
    String version;
    int rest;
    if (segs[0].equals("api")) {
      if (segs.length == 1) {
        return new Route(null, null, null, null, "get", path, false);
      }
      if (!segs[1].equals("v1")) {
        throw new NotFoundPath(true);
      }
      group = "";
      version = "v1";
      rest = 2;
    } else {
      if (segs.length <= 3) {
        return new Route(null, null, null, null, "get", path, false);
      }
      group = segs[1];
      version = segs[2];
      rest = 3;
    }
    if (segs.length == rest) {
      return new Route(null, null, null, null, "get", path, false);
    }
    String[] r = java.util.Arrays.copyOfRange(segs, rest, segs.length);
    String ns = null;
    String plural;
    String name = null;
    String sub = null;
    if (r[0].equals("namespaces")
        && group.isEmpty()
        && r.length >= 3
        && !r[2].equals("status")
        && !r[2].equals("finalize")) {
      ns = r[1];
      plural = r[2];
      if (r.length >= 4) {
        name = r[3];
      }
      if (r.length == 5) {
        sub = r[4];
      }
      if (r.length > 5) {
        throw new NotFoundPath(true);
      }
    } else if (r[0].equals("namespaces") && !group.isEmpty() && r.length >= 3) {
      ns = r[1];
      plural = r[2];
      if (r.length >= 4) {
        name = r[3];
      }
      if (r.length == 5) {
        sub = r[4];
      }
      if (r.length > 5) {
        throw new NotFoundPath(true);
      }
    } else {
      plural = r[0];
      if (r.length >= 2) {
        name = r[1];
      }
      if (r.length == 3) {
        sub = r[2];
      }
      if (r.length > 3) {
        throw new NotFoundPath(true);
      }
    }
    ResourceType rt =
        ResourceType.byPath(group, version, plural)
            .filter(emulator::serves)
            .orElseThrow(() -> new NotFoundPath(true));
    if (rt.namespaced() && ns == null && name != null) {
      throw new NotFoundPath(true);
    }
    if (!rt.namespaced() && ns != null) {
      throw new NotFoundPath(true);
    }
    if (sub != null
        && !(sub.equals("status") && rt.hasStatus())
        && !((sub.equals("binding") || sub.equals("eviction")) && rt == ResourceType.PODS)) {
      throw new NotFoundPath(true);
    }
    boolean collection = name == null;
    String verb =
        switch (method) {
          case "GET", "HEAD" -> collection ? (isTrue(q.get("watch")) ? "watch" : "list") : "get";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> collection ? "deletecollection" : "delete";
          default -> method.toLowerCase(Locale.ROOT);
        };
    return new Route(
        rt, ns, name, sub, verb, sub == null ? plural : plural + "/" + sub, collection);
  }

  private static boolean isTrue(String v) {
    return v != null && (v.equals("true") || v.equals("1"));
  }

  // ------------------------------------------------------------------ non-resource

  private Response nonResource(HttpExchange ex, String path) throws NotFoundPath {
    String p =
        path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
    switch (p) {
      case "/api":
        return Response.json(200, Discovery.apiVersions(emulator.hostPort()));
      case "/api/v1":
        return Response.json(200, Discovery.resourceList("v1"));
      case "/apis":
        return Response.json(200, Discovery.apiGroupList(emulator.servesDra()));
      case "/apis/" + Discovery.SCHEDULING_GROUP:
        return Response.json(200, Discovery.apiGroup(Discovery.SCHEDULING_GROUP));
      case "/apis/" + Discovery.SCHEDULING_GROUP + "/" + Discovery.SCHEDULING_VERSION:
        return Response.json(
            200,
            Discovery.resourceList(
                Discovery.SCHEDULING_GROUP + "/" + Discovery.SCHEDULING_VERSION));
      case "/apis/" + ResourceType.DRA_GROUP:
        if (emulator.servesDra()) {
          return Response.json(200, Discovery.apiGroup(ResourceType.DRA_GROUP));
        }
        return Response.error(StatusError.notFoundPath());
      case "/apis/" + ResourceType.DRA_GROUP + "/v1":
        if (emulator.servesDra()) {
          return Response.json(200, Discovery.resourceList(ResourceType.DRA_GROUP + "/v1"));
        }
        return Response.error(StatusError.notFoundPath());
      case "/version":
        return Response.json(200, Discovery.version());
      case "/healthz", "/readyz", "/livez":
        return Response.text(200, "ok");
      default:
        if (p.startsWith("/api") || p.startsWith("/apis")) {
          return Response.error(StatusError.notFoundPath());
        }
        return Response.text(404, "404 page not found\n");
    }
  }

  // ------------------------------------------------------------------ resources

  private static String mediaType(HttpExchange ex) {
    String ct = ex.getRequestHeaders().getFirst("Content-Type");
    if (ct == null) {
      return "";
    }
    int semi = ct.indexOf(';');
    return (semi < 0 ? ct : ct.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
  }

  private static JsonNode parseBody(ResourceType rt, byte[] body, HttpExchange ex)
      throws StatusError {
    String mt = mediaType(ex);
    if (!mt.isEmpty() && !mt.equals(JSON_TYPE) && !mt.equals("*/*")) {
      throw StatusError.unsupportedMediaType(mt, "application/json");
    }
    try {
      JsonNode n = MAPPER.readTree(body);
      if (n == null || n.isMissingNode()) {
        throw StatusError.badRequest(
            "the object provided is unrecognized (must be of type "
                + rt.kind()
                + "): couldn't get version/kind; json parse error: unexpected end of JSON input");
      }
      return n;
    } catch (IOException e) {
      throw StatusError.badRequest(
          "the object provided is unrecognized (must be of type "
              + rt.kind()
              + "): couldn't get version/kind; json parse error: "
              + firstLine(e));
    }
  }

  private static String firstLine(IOException e) {
    String m = e instanceof JsonProcessingException jpe ? jpe.getOriginalMessage() : e.getMessage();
    return m == null ? e.toString() : m.split("\n")[0];
  }

  private static LabelSelector labelSelector(Map<String, String> q) throws StatusError {
    try {
      return LabelSelector.parse(q.get("labelSelector"));
    } catch (SelectorParseException e) {
      throw StatusError.badRequest(e.getMessage());
    }
  }

  private static FieldSelector fieldSelector(ResourceType rt, Map<String, String> q)
      throws StatusError {
    try {
      FieldSelector fs = FieldSelector.parse(q.get("fieldSelector"));
      fs.requireSupported(rt.fieldSelectors());
      return fs;
    } catch (SelectorParseException e) {
      String unsupported = "field label not supported: ";
      if (rt.group().equals(ResourceType.DRA_GROUP) && e.getMessage().startsWith(unsupported)) {
        // kube-apiserver names the group, version and kind outside the legacy core group
        throw StatusError.badRequest(
            e.getMessage()
                .replace(
                    unsupported,
                    "field label not supported for "
                        + rt.apiVersion()
                        + ", Kind="
                        + rt.kind()
                        + ": "));
      }
      throw StatusError.badRequest(e.getMessage());
    }
  }

  private Response resource(HttpExchange ex, Route r, Map<String, String> q, byte[] body)
      throws StatusError {
    if (q.containsKey("dryRun")) {
      throw StatusError.badRequest("dryRun is not supported by the hami-lock emulator");
    }
    ResourceType rt = r.rt();
    String sub = r.subresource();
    switch (r.verb()) {
      case "list":
        return list(rt, r.namespace(), q);
      case "get":
        return object(200, store.get(rt, r.namespace(), r.name()));
      case "create":
        if (r.collection()) {
          return object(
              201, store.create(rt, r.namespace(), parseBody(rt, body, ex), false, "create"));
        }
        if ("binding".equals(sub)) {
          store.bind(r.namespace(), r.name(), parseBody(rt, body, ex));
          ObjectNode s = Store.JSON.objectNode();
          s.put("kind", "Status").put("apiVersion", "v1");
          s.putObject("metadata");
          s.put("status", "Success").put("code", 201);
          return Response.json(201, s);
        }
        if ("eviction".equals(sub)) { // policy/v1 Eviction: budgets, then a delete
          JsonNode opts = parseBody(rt, body, ex).path("deleteOptions");
          store.checkDisruption(r.namespace(), r.name());
          delete(
              ex,
              r,
              opts.isObject() ? opts.toString().getBytes(StandardCharsets.UTF_8) : new byte[0]);
          ObjectNode s = Store.JSON.objectNode();
          s.put("kind", "Status").put("apiVersion", "v1");
          s.putObject("metadata");
          s.put("status", "Success").put("code", 201);
          return Response.json(201, s);
        }
        throw StatusError.methodNotAllowed("create");
      case "update":
        if (r.collection()) {
          throw StatusError.methodNotAllowed("update");
        }
        return object(
            200,
            store.update(
                rt,
                r.namespace(),
                r.name(),
                parseBody(rt, body, ex),
                "status".equals(sub),
                "update"));
      case "patch":
        if (r.collection() || "binding".equals(sub)) {
          throw StatusError.methodNotAllowed("patch");
        }
        return patch(ex, r, body);
      case "delete":
        if (sub != null) {
          throw StatusError.methodNotAllowed("delete");
        }
        return delete(ex, r, body);
      case "deletecollection":
        return deleteCollection(r, q);
      default:
        throw StatusError.methodNotAllowed(r.verb());
    }
  }

  private Response patch(HttpExchange ex, Route r, byte[] body) throws StatusError {
    String mt = mediaType(ex);
    ResourceType rt = r.rt();
    Store.PatchType type;
    Object parsed;
    String accepted =
        rt.customResource()
            ? "application/json-patch+json, application/merge-patch+json"
            : "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json";
    switch (mt) {
      case "application/json-patch+json" -> {
        type = Store.PatchType.JSON;
        try {
          parsed = JsonPatch.parse(body);
        } catch (MalformedPatchException e) {
          throw StatusError.badRequest(e.getMessage());
        }
      }
      case "application/merge-patch+json" -> {
        type = Store.PatchType.MERGE;
        parsed = readPatch(body);
      }
      case "application/strategic-merge-patch+json" -> {
        if (rt.customResource()) {
          throw StatusError.unsupportedMediaType(mt, accepted);
        }
        type = Store.PatchType.STRATEGIC;
        parsed = readPatch(body);
      }
      default -> throw StatusError.unsupportedMediaType(mt, accepted);
    }
    return object(
        200,
        store.patch(rt, r.namespace(), r.name(), type, parsed, "status".equals(r.subresource())));
  }

  private static JsonNode readPatch(byte[] body) throws StatusError {
    try {
      JsonNode n = MAPPER.readTree(body);
      if (n == null || n.isMissingNode()) {
        throw StatusError.badRequest("invalid JSON patch");
      }
      return n;
    } catch (IOException e) {
      throw StatusError.badRequest("invalid JSON patch");
    }
  }

  private Response delete(HttpExchange ex, Route r, byte[] body) throws StatusError {
    String preUid = null;
    String preRv = null;
    if (body.length > 0) {
      JsonNode opts;
      try {
        opts = MAPPER.readTree(body);
      } catch (IOException e) {
        throw StatusError.badRequest("json parse error in DeleteOptions: " + firstLine(e));
      }
      if (opts != null && opts.isObject()) {
        JsonNode pre = opts.path("preconditions");
        if (pre.hasNonNull("uid")) {
          preUid = pre.get("uid").asText();
        }
        if (pre.hasNonNull("resourceVersion")) {
          preRv = pre.get("resourceVersion").asText();
        }
        if (opts.has("dryRun") && opts.get("dryRun").size() > 0) {
          throw StatusError.badRequest("dryRun is not supported by the hami-lock emulator");
        }
      }
    }
    ResourceType rt = r.rt();
    Store.DeleteResult res = store.delete(rt, r.namespace(), r.name(), preUid, preRv, "delete");
    if (!res.deleted() || rt == ResourceType.PODS || rt == ResourceType.NAMESPACES) {
      return object(200, res.object());
    }
    ObjectNode s = Store.JSON.objectNode();
    s.put("kind", "Status").put("apiVersion", "v1");
    s.putObject("metadata");
    s.put("status", "Success");
    ObjectNode d = s.putObject("details");
    d.put("name", r.name());
    if (!rt.group().isEmpty()) {
      d.put("group", rt.group());
    }
    d.put("kind", rt.plural());
    d.put("uid", res.object().path("metadata").path("uid").asText());
    return Response.json(200, s);
  }

  private Response deleteCollection(Route r, Map<String, String> q) throws StatusError {
    ResourceType rt = r.rt();
    if (rt == ResourceType.NAMESPACES) {
      throw StatusError.methodNotAllowed("deletecollection");
    }
    LabelSelector ls = labelSelector(q);
    FieldSelector fs = fieldSelector(rt, q);
    Store.ListResult victims = store.list(rt, r.namespace(), ls, fs, 0, null);
    ArrayNode items = Store.JSON.arrayNode();
    for (ObjectNode o : victims.items()) {
      JsonNode m = o.path("metadata");
      try {
        Store.DeleteResult d =
            store.delete(
                rt,
                m.path("namespace").asText(null),
                m.path("name").asText(),
                null,
                null,
                "deletecollection");
        items.add(listItem(rt, d.object()));
      } catch (StatusError e) {
        if (e.code != 404) {
          throw e;
        }
      }
    }
    ObjectNode list = Store.JSON.objectNode();
    list.put("kind", rt.kind() + "List");
    list.put("apiVersion", rt.apiVersion());
    list.putObject("metadata").put("resourceVersion", Long.toString(store.revision()));
    list.set("items", items);
    return Response.json(200, list);
  }

  private Response list(ResourceType rt, String ns, Map<String, String> q) throws StatusError {
    LabelSelector ls = labelSelector(q);
    FieldSelector fs = fieldSelector(rt, q);
    long limit = 0;
    if (q.containsKey("limit") && !q.get("limit").isEmpty()) {
      try {
        limit = Long.parseLong(q.get("limit"));
      } catch (NumberFormatException e) {
        throw StatusError.badRequest("invalid limit: " + q.get("limit"));
      }
    }
    String start = null;
    String cont = q.get("continue");
    if (cont != null && !cont.isEmpty()) {
      try {
        start = new String(Base64.getUrlDecoder().decode(cont), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        throw StatusError.badRequest("continue key is not valid: " + cont);
      }
    }
    Store.ListResult res = store.list(rt, ns, ls, fs, limit, start);
    ObjectNode list = Store.JSON.objectNode();
    list.put("kind", rt.kind() + "List");
    list.put("apiVersion", rt.apiVersion());
    ObjectNode meta = list.putObject("metadata");
    meta.put("resourceVersion", Long.toString(res.revision()));
    if (res.continueToken() != null) {
      meta.put(
          "continue",
          Base64.getUrlEncoder()
              .withoutPadding()
              .encodeToString(res.continueToken().getBytes(StandardCharsets.UTF_8)));
      meta.put("remainingItemCount", res.remaining());
    }
    ArrayNode items = list.putArray("items");
    for (ObjectNode o : res.items()) {
      items.add(listItem(rt, o));
    }
    return Response.json(200, list);
  }

  /** Core list items carry no kind/apiVersion on the wire; custom resource items do. */
  private ObjectNode listItem(ResourceType rt, ObjectNode o) {
    ObjectNode out = emulator.decorate(o);
    if (!rt.customResource()) {
      ObjectNode shallow = Store.JSON.objectNode();
      shallow.setAll(out);
      shallow.remove(List.of("kind", "apiVersion"));
      return shallow;
    }
    return out;
  }

  private Response object(int code, ObjectNode o) {
    return Response.json(code, emulator.decorate(o));
  }

  // ------------------------------------------------------------------ watch

  private void serveWatch(HttpExchange ex, Route r, Map<String, String> q) throws Exception {
    Watcher w;
    long timeoutNanos;
    try {
      LabelSelector ls = labelSelector(q);
      FieldSelector fs = fieldSelector(r.rt(), q);
      timeoutNanos = Long.MAX_VALUE;
      String ts = q.get("timeoutSeconds");
      if (ts != null && !ts.isEmpty()) {
        try {
          long s = Long.parseLong(ts);
          if (s > 0) {
            timeoutNanos = s * 1_000_000_000L;
          }
        } catch (NumberFormatException e) {
          throw StatusError.badRequest("invalid timeoutSeconds: " + ts);
        }
      }
      w = store.watch(r.rt(), r.namespace(), ls, fs, q.get("resourceVersion"));
    } catch (StatusError e) {
      send(ex, Response.error(e));
      return;
    }
    boolean bookmarks = isTrue(q.get("allowWatchBookmarks"));
    long bookmarkEvery = emulator.bookmarkInterval().toNanos();
    try {
      ex.getResponseHeaders().set("Content-Type", JSON_TYPE);
      ex.getResponseHeaders().set("Cache-Control", "no-cache, private");
      ex.sendResponseHeaders(200, 0);
      OutputStream os = ex.getResponseBody();
      os.flush();
      long start = System.nanoTime();
      long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE : start + timeoutNanos;
      long nextBookmark = bookmarks ? start + bookmarkEvery : Long.MAX_VALUE;
      boolean finalBookmarkQueued = false;
      while (!emulator.isClosed()) {
        long now = System.nanoTime();
        long wait = Math.min(deadline, nextBookmark) - now;
        Watcher.Event e = w.poll(Math.min(wait, 1_000_000_000L));
        if (e == Watcher.CLOSE) {
          break;
        }
        if (e != null) {
          if (e.type().equals("BOOKMARK") && finalBookmarkQueued) {
            write(os, e, false);
            break;
          }
          write(os, e, !e.type().equals("ERROR") && !e.type().equals("BOOKMARK"));
          continue;
        }
        now = System.nanoTime();
        if (now - deadline >= 0 && deadline != Long.MAX_VALUE) {
          if (bookmarks && !finalBookmarkQueued) {
            finalBookmarkQueued = true;
            store.bookmark(w);
            continue;
          }
          break;
        }
        if (now - nextBookmark >= 0 && nextBookmark != Long.MAX_VALUE) {
          store.bookmark(w);
          nextBookmark = now + bookmarkEvery;
        }
      }
      os.close();
    } catch (IOException closedByClient) {
      LOG.debug("watch {} ended by the client: {}", r.resource(), closedByClient.toString());
    } finally {
      w.close();
      store.unregister(w);
    }
  }

  private void write(OutputStream os, Watcher.Event e, boolean decorate) throws IOException {
    ObjectNode ev = Store.JSON.objectNode();
    ev.put("type", e.type());
    ev.set("object", decorate ? emulator.decorate(e.object()) : e.object());
    byte[] bytes = MAPPER.writeValueAsBytes(ev);
    os.write(bytes);
    os.write('\n');
    os.flush();
  }
}
