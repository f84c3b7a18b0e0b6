/**
 * A HAMi-compatible Kubernetes scheduler extender built on hami-lock: the {@code filter} and {@code
 * bind} verbs ({@link dev.hamilock.extender.HamiExtender}), HAMi's flags in Go duration syntax with
 * the refuse-to-start rule ({@link dev.hamilock.extender.ExtenderConfig}) and a small HTTP server
 * with HAMi's routes ({@link dev.hamilock.extender.ExtenderServer}). Cluster access is injected
 * through the bind module's ports; no Kubernetes client is needed here. The wire types live in
 * {@link dev.hamilock.extender.v1}.
 */
package dev.hamilock.extender;
