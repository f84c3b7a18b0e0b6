/**
 * hami-lock bind test support, for tests and demos only (not in the BOM): an in-memory cluster
 * behind the bind flow's ports ({@code dev.hamilock.bind.memory}), the reusable gang-bind scenario,
 * simulated device plugin, physical ledger, invariant checker and the deliberately broken {@code
 * NoOpNodeLock} ({@code dev.hamilock.bind.testing}), and the QuickTheories scenario generators
 * ({@code dev.hamilock.bind.scenarios}; needs QuickTheories and hami-lock-test-generators, optional
 * dependencies of this module).
 */
module dev.hamilock.bind.testkit {
  requires transitive dev.hamilock.bind;
  requires transitive dev.hamilock.core;
  requires transitive dev.hamilock.device.spi;
  requires static quicktheories;
  requires static dev.hamilock.testing.generators;

  exports dev.hamilock.bind.memory;
  exports dev.hamilock.bind.testing;
  exports dev.hamilock.bind.scenarios;
}
