/**
 * hami-lock on the official Kubernetes Java client (client-java 27): HAMi's node lock as a
 * one-request annotation lock on Node objects, pod-based owner liveness, the shared release
 * watch, and the V1Pod/V1Node → view mapper.
 *
 * <ul>
 *   <li>{@code dev.hamilock.k8s}: {@code KubernetesNodeLocks}, the validating builder that
 *       assembles everything;</li>
 *   <li>{@code dev.hamilock.k8s.lock}: {@code NodeAnnotationLockStore}, {@code PodOwnerLiveness};</li>
 *   <li>{@code dev.hamilock.k8s.watch}: {@code NodeLockWatch} (one per client, every lock key) feeding core's {@code FairReleaseQueue};</li>
 *   <li>{@code dev.hamilock.k8s.view}: {@code KubernetesViews};</li>
 *   <li>{@code dev.hamilock.k8s.bind}: {@code KubernetesCluster} (the bind flow's cluster ports) and
 *       {@code KubernetesHami} (the whole stack for one {@code ApiClient});</li>
 *   <li>{@code dev.hamilock.k8s.internal}: raw HTTP and failure classification (not exported).</li>
 * </ul>
 * client-java's jars are automatic modules ({@code io.kubernetes.client.java},
 * {@code io.kubernetes.client.java.api}); they share no package, so they resolve on the module
 * path.
 */
module dev.hamilock.k8s {
    requires transitive dev.hamilock.core;
    requires transitive dev.hamilock.device.spi;
    requires transitive io.kubernetes.client.java.api;
    requires transitive dev.hamilock.bind;
    requires io.kubernetes.client.java;
    requires com.google.gson;
    requires okhttp3;
    requires okio;
    requires dev.failsafe.core;
    requires org.slf4j;

    exports dev.hamilock.k8s;
    exports dev.hamilock.k8s.lock;
    exports dev.hamilock.k8s.watch;
    exports dev.hamilock.k8s.view;
    exports dev.hamilock.k8s.bind;
}
