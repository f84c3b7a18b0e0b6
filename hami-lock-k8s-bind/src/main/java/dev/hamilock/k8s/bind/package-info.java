/**
 * The bind flow of hami-lock-bind on client-java: {@link dev.hamilock.k8s.bind.KubernetesCluster}
 * implements the cluster ports ({@code ClusterReader}, {@code ClusterWriter}) with raw,
 * schema-free, quorum-read requests, and {@link dev.hamilock.k8s.stack.KubernetesHamiStack} wires
 * the whole stack (ports, node locks per vendor lock key, {@code PodBinder}, {@code
 * ExtenderFilter}, {@code DevicePluginHandoff}) for one {@code ApiClient}.
 */
package dev.hamilock.k8s.bind;
