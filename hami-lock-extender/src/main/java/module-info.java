/**
 * hami-lock scheduler extender: the kube-scheduler extender wire types ({@code
 * dev.hamilock.extender.v1}) and HAMi's filter/bind handlers, flags and HTTP server ({@code
 * dev.hamilock.extender}). No Kubernetes client.
 */
// requires-transitive-automatic: micrometer-core is an automatic module (no module-info upstream);
// the transitive requires is deliberate so users of this module read it without naming it.
@SuppressWarnings("requires-transitive-automatic")
module dev.hamilock.extender {
  requires transitive dev.hamilock.bind;
  requires transitive com.fasterxml.jackson.databind;
  requires org.eclipse.jetty.server;
  requires transitive micrometer.core;
  requires org.slf4j;

  exports dev.hamilock.extender;
  exports dev.hamilock.extender.v1;
}
