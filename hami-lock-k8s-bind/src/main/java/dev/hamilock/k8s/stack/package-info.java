/**
 * The whole hami-lock stack on client-java: {@link dev.hamilock.k8s.stack.KubernetesHamiStack}
 * wires the cluster ports, one node lock per vendor lock key and HAMi's flows for one {@code
 * ApiClient}, and exposes the flows (bind, Filter, device-plugin hand-off), not its parts.
 */
package dev.hamilock.k8s.stack;
