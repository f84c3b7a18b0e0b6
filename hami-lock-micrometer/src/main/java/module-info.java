/** hami-lock's node lock meters on Micrometer ({@code MicrometerNodeLockListener}). */
module dev.hamilock.micrometer {
  requires transitive dev.hamilock.core;
  requires transitive micrometer.core;

  exports dev.hamilock.micrometer;
}
