package dev.hamilock.bind.testing;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Inverts a property: it passes only if jqwik falsified it with an {@link AssertionError} (a
 * violation of the checked invariant, not a crash), and fails if every try passed. Used to show
 * the gang-bind property has teeth.
 */
public final class ExpectCounterexample implements AroundPropertyHook {
  @Override
  public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
    PropertyExecutionResult r = property.execute();
    if (r.status() == PropertyExecutionResult.Status.FAILED) {
      Throwable t = r.throwable().orElse(null);
      if (t instanceof AssertionError) {
        return r.mapToSuccessful();
      }
      return r.mapToFailed(new AssertionError("the property failed, but not with a violation: " + t, t));
    }
    return r.mapToFailed("expected jqwik to find a counterexample in " + r.countTries() + " tries, found none");
  }
}
