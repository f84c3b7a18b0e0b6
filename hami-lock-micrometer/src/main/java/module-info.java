/** hami-lock's node lock meters on Micrometer ({@code MicrometerNodeLockListener}). */
// requires-transitive-automatic: micrometer-core is an automatic module (no module-info upstream);
// the transitive requires is deliberate so users of this module read it without naming it.
@SuppressWarnings("requires-transitive-automatic")
module dev.hamilock.micrometer {
  requires transitive dev.hamilock.core;
  requires transitive micrometer.core;

  exports dev.hamilock.micrometer;
}
