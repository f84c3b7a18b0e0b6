package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderFilterResult;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The Filter decides on the pod a watched cache holds ({@link PodSchedulerNames#cachedPod}, issue
 * 25: no pod GET per {@code /filter}), and a cache behind the API server never has its copy written
 * over: the patch is conditioned on the copy's resourceVersion, fails, and the pod is read fresh
 * and filtered again. A copy of another incarnation is never used.
 */
class FilterFromPodCacheTest {
  private static final String HAMI_ALLOCATION = "hami.io/vgpu-devices-to-allocate";

  private final TestCluster t = new TestCluster(Duration.ofSeconds(1));
  private final AtomicReference<ClusterPod> cache = new AtomicReference<>();
  private final HamiExtender extender =
      t.extender.servingSchedulers(List.of("hami-scheduler"), lookup());

  /** Every pod of hami-scheduler; the cached copy is whatever {@link #cache} holds. */
  private PodSchedulerNames lookup() {
    return new PodSchedulerNames() {
      @Override
      public Optional<String> schedulerName(String namespace, String name, String uid) {
        return Optional.of("hami-scheduler");
      }

      @Override
      public Optional<ClusterPod> cachedPod(String namespace, String name, String uid) {
        return Optional.ofNullable(cache.get());
      }
    };
  }

  private ExtenderFilterResult filter(ObjectNode pod) {
    return extender.filter(ExtenderArgs.ofNodeNames(pod, List.of("node-a")));
  }

  private long reads() {
    return t.cluster.operationCount(Operation.READ_POD);
  }

  private long patches() {
    return t.cluster.operationCount(Operation.PATCH_POD);
  }

  @Test
  void aCurrentCopyCostsNoPodGetAndOnePatch() throws Exception {
    ObjectNode pod = t.addGangWorker("w", 3000);
    cache.set(t.cluster.readPod("default", "w").orElseThrow());
    long reads = reads();

    ExtenderFilterResult r = filter(pod);

    assertThat(r.error()).isEmpty();
    assertThat(r.nodeNames()).contains(List.of("node-a"));
    assertThat(reads() - reads).as("pod GETs").isZero();
    assertThat(patches()).as("the Filter's PATCH").isEqualTo(1);
    assertThat(t.pod("w").annotations()).containsKey(HAMI_ALLOCATION);
  }

  @Test
  void aStaleCopyIsNeverWrittenOverTheStoredPodWhichIsReadAndFilteredAgain() throws Exception {
    ObjectNode pod = t.addGangWorker("w", 3000);
    cache.set(t.cluster.readPod("default", "w").orElseThrow());
    // written after the cache's copy (a label, as another controller would): the copy is stale
    t.cluster.patchPodMetadata(
        "default", "w", MetadataPatch.builder().setLabel("team", "vision").build());
    long reads = reads();
    long patches = patches();

    ExtenderFilterResult r = filter(pod);

    assertThat(r.error()).isEmpty();
    assertThat(r.nodeNames()).contains(List.of("node-a"));
    assertThat(reads() - reads).as("the fresh read after the refused patch").isEqualTo(1);
    assertThat(patches() - patches).as("the refused patch and the one after the read").isEqualTo(2);
    assertThat(t.pod("w").annotations()).containsKey(HAMI_ALLOCATION);
    assertThat(t.pod("w").labels()).as("the later write kept").containsEntry("team", "vision");
  }

  /**
   * The bind verb's admission (the pod exists in that incarnation, of a served scheduler, asks for
   * a managed device: facts that do not change within an incarnation) takes the cache's copy: one
   * pod GET fewer than a bind whose pod the cache does not hold; the bind flow's own reads stay.
   */
  @Test
  void theBindsAdmissionTakesTheCachedCopy() throws Exception {
    ObjectNode cachedPod = t.addGangWorker("w", 3000);
    ObjectNode freshPod = t.addGangWorker("v", 3000);
    cache.set(t.cluster.readPod("default", "w").orElseThrow());
    assertThat(filter(cachedPod).error()).isEmpty();
    long before = reads();
    assertThat(extender.bind(new ExtenderBindingArgs("w", "default", "uid-w", "node-a")).error())
        .isEmpty();
    long withCache = reads() - before;
    cache.set(null);
    assertThat(extender.filter(ExtenderArgs.ofNodeNames(freshPod, List.of("node-b"))).error())
        .isEmpty();
    before = reads();
    assertThat(extender.bind(new ExtenderBindingArgs("v", "default", "uid-v", "node-b")).error())
        .isEmpty();
    long withoutCache = reads() - before;

    assertThat(withCache).as("pod GETs of the bind with the cache").isEqualTo(withoutCache - 1);
    assertThat(t.pod("w").nodeName()).contains("node-a");
  }

  @Test
  void aCopyOfAnotherIncarnationIsNotUsed() throws Exception {
    t.addGangWorker("w", 3000);
    cache.set(t.cluster.readPod("default", "w").orElseThrow());
    t.cluster.deletePod("default", "w");
    ObjectNode again = t.addGangWorker("w", 3000); // same name and UID text: replace the UID
    ((ObjectNode) again.get("metadata")).put("uid", "uid-w-2");
    t.cluster.deletePod("default", "w");
    t.cluster.addPod(dev.hamilock.device.spi.view.JsonViews.podView(again));
    long reads = reads();

    ExtenderFilterResult r = filter(again);

    assertThat(r.error()).isEmpty();
    assertThat(reads() - reads).as("the cache's copy is uid-w: read fresh").isEqualTo(1);
    assertThat(t.pod("w").annotations()).containsKey(HAMI_ALLOCATION);
  }

  /**
   * A copy the watch still holds of a pod deleted since (or replaced by another incarnation under
   * its name) is refused as the fresh read refuses it (400, {@code pod_not_found} or {@code
   * pod_uid}), not answered as a failed filter: its patch, conditioned on the copy's UID and
   * resourceVersion, answers NOT_FOUND, and the fresh read decides.
   */
  @Test
  void aCopyOfADeletedPodIsRefusedAsWithoutTheCache() throws Exception {
    ObjectNode pod = t.addGangWorker("w", 3000);
    cache.set(t.cluster.readPod("default", "w").orElseThrow());
    t.cluster.deletePod("default", "w");
    ExtenderArgs args = ExtenderArgs.ofNodeNames(pod, List.of("node-a"));

    assertRefusedAsWithoutTheCache(args, "pod_not_found");
  }

  /** The filter of {@code args} refused with the cache's copy, then without: the same refusal. */
  private void assertRefusedAsWithoutTheCache(ExtenderArgs args, String reason) {
    RequestRejectedException cached =
        catchThrowableOfType(() -> extender.filterChecked(args), RequestRejectedException.class);
    cache.set(null);
    RequestRejectedException fresh =
        catchThrowableOfType(() -> extender.filterChecked(args), RequestRejectedException.class);

    assertThat(fresh).isNotNull();
    assertThat(cached).as("refused as without the cache").isNotNull();
    assertThat(cached.reason()).isEqualTo(fresh.reason()).isEqualTo(reason);
    assertThat(cached.getMessage()).isEqualTo(fresh.getMessage());
  }

  @Test
  void aCopyOfAReplacedIncarnationIsRefusedAsWithoutTheCache() throws Exception {
    ObjectNode old = t.addGangWorker("w", 3000);
    cache.set(t.cluster.readPod("default", "w").orElseThrow());
    ObjectNode again = old.deepCopy();
    ((ObjectNode) again.get("metadata")).put("uid", "uid-w-2");
    t.cluster.deletePod("default", "w");
    t.cluster.addPod(dev.hamilock.device.spi.view.JsonViews.podView(again));
    ExtenderArgs args = ExtenderArgs.ofNodeNames(old, List.of("node-a"));

    assertRefusedAsWithoutTheCache(args, "pod_uid");
    assertThat(t.pod("w").annotations()).doesNotContainKey(HAMI_ALLOCATION);
  }

  /**
   * A Filter that writes no annotations ({@code HamiStack.Builder#writeFilterAnnotations(false)})
   * has no patch to refuse a stale copy: its decisions are never "annotated", and taking the
   * cache's copy made every filter decide twice (the copy, then the pod read fresh): more reads
   * than without the cache. Such a Filter reads the pod fresh, once.
   */
  @Test
  void aFilterWritingNoAnnotationsDecidesOnceAsWithoutTheCache() throws Exception {
    HamiExtender quiet =
        HamiExtender.create(
                dev.hamilock.bind.ExtenderFilter.builder(t.cluster, t.registry)
                    .fitter(t.config.schedulerFlags().podFitter(t.registry))
                    .writer(t.cluster) // annotate() only: Filter annotations not written
                    .build(),
                TestCluster.binder(t.config, t.cluster, t.cluster, t.registry, t.locks).build(),
                t.cluster,
                t.registry)
            .servingSchedulers(List.of("hami-scheduler"), lookup());
    ObjectNode pod = t.addGangWorker("w", 3000);
    cache.set(t.cluster.readPod("default", "w").orElseThrow());
    long lists = t.cluster.operationCount(Operation.LIST_ASSIGNED);
    long reads = reads();
    ExtenderFilterResult withCache = quiet.filter(ExtenderArgs.ofNodeNames(pod, List.of("node-a")));
    long listsWithCache = t.cluster.operationCount(Operation.LIST_ASSIGNED) - lists;
    long readsWithCache = reads() - reads;
    cache.set(null);
    lists = t.cluster.operationCount(Operation.LIST_ASSIGNED);
    reads = reads();
    ExtenderFilterResult without = quiet.filter(ExtenderArgs.ofNodeNames(pod, List.of("node-a")));

    assertThat(withCache.nodeNames()).isEqualTo(without.nodeNames()).contains(List.of("node-a"));
    assertThat(listsWithCache)
        .as("candidate lists with the cache")
        .isEqualTo(t.cluster.operationCount(Operation.LIST_ASSIGNED) - lists);
    assertThat(readsWithCache).as("pod GETs with the cache").isLessThanOrEqualTo(reads() - reads);
    assertThat(patches()).as("nothing written").isZero();
  }

  /**
   * A cache that gives its copy without a resourceVersion ({@link PodSchedulerNames#cachedPod} is
   * public: a library user's cache) would have the Filter's patch sent unconditioned, deciding on a
   * copy that may predate a bind: that copy is not used, the pod is read fresh.
   */
  @Test
  void aCopyWithoutResourceVersionIsNotUsedAndAServedPodKeepsItsAllocation() throws Exception {
    ObjectNode pod = t.addGangWorker("w", 3000);
    ClusterPod before = t.cluster.readPod("default", "w").orElseThrow();
    cache.set(new ClusterPod(before.view(), before.nodeName(), ""));
    // served since the copy was taken (another replica's Filter and bind)
    t.cluster.patchPodMetadata(
        "default",
        "w",
        MetadataPatch.builder()
            .setAnnotation(HAMI_ALLOCATION, "served-allocation")
            .setAnnotation("hami.io/bind-phase", "success")
            .build());

    filter(pod);

    assertThat(t.pod("w").annotations())
        .as("a served pod's allocation is never overwritten")
        .containsEntry(HAMI_ALLOCATION, "served-allocation");
  }
}
