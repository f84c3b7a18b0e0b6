/**
 * hami-lock core: the HAMi node-lock vocabulary and algorithms, free of any Kubernetes client.
 *
 * <ul>
 *   <li>{@code dev.hamilock.core}: lock values and codec, {@code NodeLock} port, exceptions, {@code
 *       RetryPolicy}, gang membership, {@code GoDuration}, listener and signal ports;
 *   <li>{@code dev.hamilock.core.store}: the {@code LockStore} backend port, the shared lock
 *       semantics over it ({@code StoreNodeLock}) and the in-memory backend;
 *   <li>{@code dev.hamilock.core.acquire}: the gang-aware acquire loop (a deadline loop over waiter
 *       handles; its waits hold no thread);
 *   <li>{@code dev.hamilock.core.annotation}: the client-neutral Node-annotation backend (patch
 *       bodies, compare-and-set verdicts, release detection) that each client adapter calls.
 * </ul>
 */
// module: the qualified exports name modules built after this one (they depend on it), so
// javac warns "module not found" when this one compiles alone.
@SuppressWarnings("module")
module dev.hamilock.core {
  requires org.slf4j;

  exports dev.hamilock.core;
  exports dev.hamilock.core.store;
  exports dev.hamilock.core.acquire;
  exports dev.hamilock.core.annotation;
  // internal: the argument checks (README "Conventions") shared by the hami-lock modules, no API
  exports dev.hamilock.core.internal to
      dev.hamilock.bind,
      dev.hamilock.k8s,
      dev.hamilock.k8s.bind,
      dev.hamilock.fabric8.bind,
      dev.hamilock.extender,
      dev.hamilock.bind.testkit;
}
