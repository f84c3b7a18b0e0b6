/**
 * hami-lock test support (test scope only, not in the BOM): how every module runs its QuickTheories
 * properties ({@code Props}) and the value spaces several modules generate from ({@code Gens}).
 */
module dev.hamilock.testing.generators {
  requires transitive quicktheories;

  exports dev.hamilock.testing.generators;
}
