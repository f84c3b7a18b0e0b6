/** hami-lock core: the HAMi node-lock vocabulary and algorithms, free of any Kubernetes client. */
// module: the qualified exports name modules built after this one (they depend on it), so
// javac warns "module not found" when this one compiles alone.
@SuppressWarnings("module")
module dev.hamilock.core {
  requires org.slf4j;

  exports dev.hamilock.core;
  exports dev.hamilock.core.store;
  exports dev.hamilock.core.acquire;
  exports dev.hamilock.core.annotation;
  exports dev.hamilock.core.watch;
  // internal: the argument checks (README "Conventions") shared by the hami-lock modules, no API
  exports dev.hamilock.core.internal to
      dev.hamilock.bind,
      dev.hamilock.k8s,
      dev.hamilock.k8s.bind,
      dev.hamilock.fabric8.bind,
      dev.hamilock.extender,
      dev.hamilock.bind.testkit;
}
