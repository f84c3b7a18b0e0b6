/**
 * hami-lock test support (test scope only, not in the BOM): how every module runs its QuickTheories
 * properties ({@code Props}), the value spaces several modules generate from ({@code Gens}) and the
 * capture of expected log entries ({@code LogCapture}).
 */
// requires-transitive-automatic: QuickTheories is an automatic module (no module-info upstream);
// the transitive requires is deliberate so users of this module read it without naming it.
@SuppressWarnings("requires-transitive-automatic")
module dev.hamilock.testing.generators {
  requires transitive quicktheories;

  exports dev.hamilock.testing.generators;
  exports dev.hamilock.testing.logs;
}
