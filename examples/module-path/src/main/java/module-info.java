/**
 * A scheduler-side program as a named module: it needs only {@code requires} of the library and the
 * testkit, and runs with {@code java --module-path ... -m} and no {@code --add-modules} or {@code
 * --add-exports} flags.
 */
module dev.hamilock.examples.modulepath {
  requires dev.hamilock.k8s.bind;
  requires dev.hamilock.testkit;
}
