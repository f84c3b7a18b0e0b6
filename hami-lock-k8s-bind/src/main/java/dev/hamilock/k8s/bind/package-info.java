/**
 * The bind flow of hami-lock-bind on client-java: {@link dev.hamilock.k8s.bind.KubernetesCluster}
 * implements the cluster ports ({@code ClusterReader}, {@code ClusterWriter}) with raw,
 * schema-free, quorum-read requests; {@link dev.hamilock.k8s.stack.KubernetesHamiStack} wires the
 * whole stack on them.
 */
package dev.hamilock.k8s.bind;
