/**
 * Ports to the cluster, free of any Kubernetes client: {@link
 * dev.hamilock.bind.cluster.ClusterReader} (fresh reads of nodes and pods) and {@link
 * dev.hamilock.bind.cluster.ClusterWriter} (merge patches of pod metadata, Bindings with typed
 * {@link dev.hamilock.bind.cluster.BindingPostResult}s). Implemented in memory by {@code
 * dev.hamilock.bind.memory.InMemoryCluster}, over client-java in hami-lock-k8s-bind.
 */
package dev.hamilock.bind.cluster;
