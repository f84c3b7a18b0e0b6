/**
 * A HAMi-compatible Kubernetes scheduler extender: the verbs ({@link
 * dev.hamilock.extender.HamiExtender}), HAMi's flags ({@link dev.hamilock.extender.ExtenderConfig})
 * and an HTTP server with HAMi's routes ({@link dev.hamilock.extender.ExtenderServer}).
 */
package dev.hamilock.extender;
