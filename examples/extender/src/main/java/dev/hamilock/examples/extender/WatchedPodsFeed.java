package dev.hamilock.examples.extender;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.view.PodView;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Feeds {@link WatchedPods} from the pod informer's own list and watch calls, in the stream's order
 * (issue 25 item 2): the informer's handlers cannot, as its {@code DeltaFIFO} reorders events.
 */
final class WatchedPodsFeed {
  private WatchedPodsFeed() {}

  /**
   * The pod informer's list and watch, which also feed {@code watchedPods} as the reflector reads
   * them: each listing whole, each event before the reflector queues it (its {@code DeltaFIFO}
   * would reorder them).
   */
  static ListerWatcher<V1Pod, V1PodList> feeding(
      GenericKubernetesApi<V1Pod, V1PodList> api, WatchedPods watchedPods) {
    return new ListerWatcher<>() {
      @Override
      public V1PodList list(CallGeneratorParams params) throws ApiException {
        V1PodList list = api.list(WatchedCache.options(params)).throwsApiException().getObject();
        try {
          watchedPods.listed(
              list.getMetadata() == null ? null : list.getMetadata().getResourceVersion(),
              list.getItems().stream().map(WatchedPodsFeed::watchedPod).toList());
        } catch (RuntimeException e) { // a pod the views refuse: the bind lists, as before
          watchedPods.lost("listing: " + e);
        }
        return list;
      }

      @Override
      public Watchable<V1Pod> watch(CallGeneratorParams params) throws ApiException {
        return new FeedingWatch(api.watch(WatchedCache.options(params)), watchedPods);
      }
    };
  }

  /** A watch stream that applies each event to the watched pods as the reflector takes it. */
  private record FeedingWatch(Watchable<V1Pod> stream, WatchedPods watchedPods)
      implements Watchable<V1Pod> {
    @Override
    public boolean hasNext() {
      return stream.hasNext();
    }

    @Override
    public Watch.Response<V1Pod> next() {
      Watch.Response<V1Pod> r = stream.next();
      try {
        switch (Objects.requireNonNullElse(r.type, "")) {
          case "ADDED", "MODIFIED" -> watchedPods.changed(watchedPod(r.object), false);
          case "DELETED" -> watchedPods.changed(watchedPod(r.object), true);
          case "BOOKMARK" -> watchedPods.progressed(r.object.getMetadata().getResourceVersion());
          case "ERROR" -> watchedPods.lost("an error event on the watch (the reflector relists)");
          default -> watchedPods.lost("a watch event of unknown type " + r.type);
        }
      } catch (RuntimeException e) {
        watchedPods.lost("watch event " + r.type + ": " + e);
      }
      return r;
    }

    @Override
    public java.util.Iterator<Watch.Response<V1Pod>> iterator() {
      return this;
    }

    @Override
    public void close() throws java.io.IOException {
      stream.close();
    }
  }

  /**
   * The pod for {@link WatchedPods}: whole if HAMi's Filter annotated it, else only its key and
   * version (it keeps none of those, and most pods of a cluster are such: no views built per
   * event).
   */
  private static ClusterPod watchedPod(V1Pod p) {
    Map<String, String> a = p.getMetadata().getAnnotations();
    if (a != null && a.containsKey(HamiAnnotations.VGPU_NODE)) {
      return WatchedCache.clusterPod(p);
    }
    return new ClusterPod(
        PodView.builder(p.getMetadata().getNamespace(), p.getMetadata().getName()).build(),
        Optional.empty(),
        Objects.requireNonNullElse(p.getMetadata().getResourceVersion(), ""));
  }
}
