/**
 * The Kubernetes scheduler-extender wire types ({@code k8s.io/kube-scheduler/extender/v1}, {@code
 * types.go}) as Java records, with a codec ({@link dev.hamilock.extender.v1.ExtenderJson}) that
 * reads and writes exactly what kube-scheduler and HAMi's extender ({@code
 * pkg/scheduler/routes/route.go}) put on the wire: the Go field names as keys ({@code Pod}, {@code
 * NodeNames}, {@code PodUID}, ..., fixture F-80), byte-identical to Go's {@code json.Marshal}.
 *
 * <p>The Pod and Node inside them are Jackson trees, read into views by {@link
 * dev.hamilock.device.spi.view.JsonViews}.
 */
package dev.hamilock.extender.v1;
