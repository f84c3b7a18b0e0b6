/**
 * The Kubernetes scheduler-extender wire types ({@code k8s.io/kube-scheduler/extender/v1}, {@code
 * types.go}) as Java records, with a codec that reads and writes exactly what kube-scheduler and
 * HAMi's extender ({@code pkg/scheduler/routes/route.go}) put on the wire.
 *
 * <p><b>Key names.</b> The Go structs carry no {@code json} tags, so the keys are the Go field
 * names in PascalCase: {@code Pod}, {@code Nodes}, {@code NodeNames}, {@code FailedNodes}, {@code
 * FailedAndUnresolvableNodes}, {@code Error}, {@code PodName}, {@code PodNamespace}, {@code
 * PodUID}, {@code Node} (fixture F-80). Go's decoder matches keys case-insensitively, so {@link
 * dev.hamilock.extender.v1.ExtenderJson} accepts any casing ({@code nodenames}, {@code podUID}) and
 * ignores unknown keys; it always writes the PascalCase names, in Go struct order, with {@code
 * null} for absent values (no {@code omitempty}) and Go's HTML-safe string escaping, so its output
 * is byte-identical to Go's {@code json.Marshal}.
 *
 * <p>These types carry no dependency on the rest of hami-lock; the Pod and Node inside them are
 * Jackson trees, read into the device SPI's views by the one Pod/Node reader, {@link
 * dev.hamilock.device.spi.view.JsonViews}. Embedders that write their own extender can use them
 * alone.
 */
package dev.hamilock.extender.v1;
