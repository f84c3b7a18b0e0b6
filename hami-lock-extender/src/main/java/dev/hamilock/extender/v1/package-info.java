/**
 * The scheduler-extender wire types ({@code k8s.io/kube-scheduler/extender/v1}) as records, and
 * their byte-exact codec {@link dev.hamilock.extender.v1.ExtenderJson}; the Pod and Node inside are
 * Jackson trees for {@link dev.hamilock.device.spi.view.JsonViews}.
 */
package dev.hamilock.extender.v1;
