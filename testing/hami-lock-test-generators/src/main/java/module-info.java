/**
 * hami-lock test support (test scope only, not in the BOM): how every module runs its QuickTheories
 * properties ({@code Props}), the value spaces several modules generate from ({@code Gens}) and the
 * capture of expected log entries ({@code LogCapture}).
 */
module dev.hamilock.testing.generators {
  requires transitive quicktheories;

  exports dev.hamilock.testing.generators;
  exports dev.hamilock.testing.logs;
}
