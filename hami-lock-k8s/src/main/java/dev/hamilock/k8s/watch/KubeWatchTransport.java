package dev.hamilock.k8s.watch;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.ToNumberPolicy;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Response;
import okio.BufferedSource;

/**
 * Core's {@link ListAndWatch.Transport} over client-java's raw HTTP: LIST pages with the request
 * timeout, streams without read timeout ({@link ListAndWatch.LineStream#cancel()} cancels the
 * call), JSON by Gson (integers as {@code Long}); a failure is an {@link ApiException} with the
 * status (410: {@link #isGone}). Thread-safe.
 */
public final class KubeWatchTransport implements ListAndWatch.Transport {

  // integers stay integers (Gson's default makes every number a double: a pod's priority 0 would
  // read as 0.0, which the pod views refuse)
  private static final Gson GSON =
      new GsonBuilder().setObjectToNumberStrategy(ToNumberPolicy.LONG_OR_DOUBLE).create();

  private final KubeHttp http;

  KubeWatchTransport(KubeHttp http) {
    this.http = http;
  }

  /**
   * @param apiClient the client whose base path and credentials the requests use
   * @param requestTimeout whole-call timeout of each LIST page, positive
   * @return the transport; its streams use {@code apiClient}'s settings without read timeout
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException naming {@code requestTimeout} if it is not positive
   */
  public static KubeWatchTransport create(ApiClient apiClient, Duration requestTimeout) {
    Validation.positive("requestTimeout", requestTimeout);
    return new KubeWatchTransport(
        new KubeHttp(Objects.requireNonNull(apiClient, "apiClient"), null, requestTimeout));
  }

  @Override
  public Map<?, ?> listPage(String path, String continueToken) throws ApiException {
    List<Pair> q = new ArrayList<>(List.of(new Pair("limit", "500")));
    if (continueToken != null) {
      q.add(new Pair("continue", continueToken));
    }
    return parseObject(new String(http.getBody(path, q), UTF_8));
  }

  @Override
  public ListAndWatch.LineStream watch(String path, String resourceVersion, long timeoutSeconds)
      throws ApiException, InterruptedException {
    List<Pair> q =
        List.of(
            new Pair("watch", "true"),
            new Pair("resourceVersion", resourceVersion),
            new Pair("allowWatchBookmarks", "true"),
            new Pair("timeoutSeconds", Long.toString(timeoutSeconds)));
    Call call = http.watchCall(path, q);
    Response response = open(call);
    if (!response.isSuccessful() || response.body() == null) {
      try (response) {
        String body = response.body() == null ? "" : response.body().string();
        throw new ApiException(response.code(), response.headers().toMultimap(), body);
      } catch (IOException e) {
        throw new ApiException(e);
      }
    }
    BufferedSource source = response.body().source();
    return new ListAndWatch.LineStream() {
      @Override
      public String readLine() throws IOException {
        return source.readUtf8Line();
      }

      @Override
      public void cancel() {
        call.cancel(); // never response.close() here: it would drain the body beside the reader
      }

      @Override
      public void close() {
        response.close(); // on the watch thread, which reads it
      }
    };
  }

  /**
   * The call's answer, waited for interruptibly: ListAndWatch's relist() and close() interrupt the
   * watch thread, and OkHttp's blocking {@code execute()} does not stop for an interrupt while the
   * API server has not answered (close() then left the thread behind); interrupted, the call is
   * cancelled and an answer that comes anyway is closed.
   */
  private static Response open(Call call) throws ApiException, InterruptedException {
    CompletableFuture<Response> answer = new CompletableFuture<>();
    call.enqueue(
        new Callback() {
          @Override
          public void onFailure(Call c, IOException e) {
            answer.completeExceptionally(e);
          }

          @Override
          public void onResponse(Call c, Response r) {
            if (!answer.complete(r)) {
              r.close(); // the watch thread stopped waiting
            }
          }
        });
    try {
      return answer.get();
    } catch (InterruptedException e) { // relist() or close(): never leave the stream open
      call.cancel();
      if (!answer.cancel(false)) {
        answer.thenAccept(Response::close); // one that came meanwhile
      }
      throw e;
    } catch (ExecutionException e) {
      throw e.getCause() instanceof IOException io ? new ApiException(io) : new ApiException(e);
    }
  }

  @Override
  public Map<?, ?> parseObject(String json) {
    Map<?, ?> m = GSON.fromJson(json, Map.class);
    if (m == null) {
      throw new IllegalArgumentException("not a JSON object: " + json);
    }
    return m;
  }

  @Override
  public boolean isGone(Exception failure) {
    return failure instanceof ApiException e && e.getCode() == 410;
  }
}
