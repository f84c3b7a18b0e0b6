package dev.hamilock.benchmarks.convergence;

import dev.hamilock.testkit.RequestKey;
import io.kubernetes.client.openapi.ApiClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Counts the requests one {@link ApiClient} sends, keyed like the emulator's counters ({@link
 * RequestKey}: Kubernetes verb and plural resource), so the harness can tell a device plugin's
 * pod-lookup requests apart from the rest of the run. Thread-safe.
 */
final class RequestCounter implements Interceptor {

  private final Map<RequestKey, AtomicLong> counts = new ConcurrentHashMap<>();

  /**
   * @param client a client; its HTTP client is replaced by one with this counter added
   */
  ApiClient install(ApiClient client) {
    client.setHttpClient(client.getHttpClient().newBuilder().addInterceptor(this).build());
    return client;
  }

  /**
   * Counts a request once it has an answer: the server handled it, so the emulator counted it too.
   * A call that fails without an answer (e.g. a pooled connection the server had closed) is not
   * counted here; if the server did count it, it stays in the run's other counts, which can only
   * over-state, never under-state, the lock requests.
   */
  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    Response response = chain.proceed(request);
    counts
        .computeIfAbsent(
            keyOf(
                request.method(),
                request.url().encodedPath(),
                request.url().queryParameter("watch") != null),
            k -> new AtomicLong())
        .incrementAndGet();
    return response;
  }

  /** Forgets every count (at the same moment as the emulator's counters). */
  void reset() {
    counts.clear();
  }

  /**
   * @return the counts so far, by key
   */
  Map<RequestKey, Long> snapshot() {
    Map<RequestKey, Long> out = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
    counts.forEach(
        (k, v) -> {
          if (v.get() > 0) {
            out.put(k, v.get());
          }
        });
    return out;
  }

  /**
   * The emulator's key of a Kubernetes API request: {@code /api/v1/nodes/n1} GET → {@code get
   * nodes}, {@code /api/v1/namespaces/ns/pods} GET → {@code list pods}, a {@code watch=true} GET →
   * {@code watch}, POST/PUT/PATCH/DELETE → create/update/patch/delete, a subresource after a slash.
   *
   * @param watch whether the request carries {@code watch}
   * @return the key; for other paths the lower-case method and the path
   */
  static RequestKey keyOf(String method, String path, boolean watch) {
    List<String> seg = new ArrayList<>(List.of(path.replaceAll("^/+", "").split("/")));
    int skip;
    if (seg.size() >= 2 && seg.get(0).equals("api")) {
      skip = 2;
    } else if (seg.size() >= 3 && seg.get(0).equals("apis")) {
      skip = 3;
    } else {
      return new RequestKey(method.toLowerCase(java.util.Locale.ROOT), path);
    }
    List<String> rest = seg.subList(skip, seg.size());
    if (rest.size() >= 3 && rest.get(0).equals("namespaces")) {
      rest = rest.subList(2, rest.size());
    }
    if (rest.isEmpty()) {
      return new RequestKey(method.toLowerCase(java.util.Locale.ROOT), path);
    }
    boolean named = rest.size() >= 2;
    String resource = rest.get(0) + (rest.size() >= 3 ? "/" + rest.get(2) : "");
    String verb =
        switch (method) {
          case "GET" -> watch ? "watch" : named ? "get" : "list";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> named ? "delete" : "deletecollection";
          default -> method.toLowerCase(java.util.Locale.ROOT);
        };
    return new RequestKey(verb, resource);
  }

  /**
   * @param total counts of every request of a run
   * @param removed counts to take away (a subset of {@code total})
   * @return the keys of which {@code removed} has more than {@code total} (the two counters
   *     disagree), described; empty if it is a subset
   */
  static Optional<String> excess(Map<RequestKey, Long> total, Map<RequestKey, Long> removed) {
    String s =
        removed.entrySet().stream()
            .filter(e -> e.getValue() > total.getOrDefault(e.getKey(), 0L))
            .map(
                e ->
                    "lookup counted "
                        + e.getValue()
                        + " x "
                        + e.getKey()
                        + " but the emulator only "
                        + total.getOrDefault(e.getKey(), 0L))
            .collect(java.util.stream.Collectors.joining("; "));
    return s.isEmpty() ? Optional.empty() : Optional.of(s);
  }

  /**
   * @param total counts of every request of a run
   * @param removed counts to take away (a subset of {@code total}; see {@link #excess})
   * @return {@code total - removed}, never below 0, keys with nothing left dropped
   */
  static Map<RequestKey, Long> minus(Map<RequestKey, Long> total, Map<RequestKey, Long> removed) {
    Map<RequestKey, Long> out = new java.util.LinkedHashMap<>(total);
    removed.forEach(
        (k, v) -> {
          long left = Math.max(0, out.getOrDefault(k, 0L) - v);
          if (left == 0) {
            out.remove(k);
          } else {
            out.put(k, left);
          }
        });
    return out;
  }
}
