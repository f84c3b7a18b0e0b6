package dev.hamilock.benchmarks.convergence;

import dev.hamilock.testkit.RequestKey;
import java.util.Map;

/**
 * Request counts of one run split the way the report shows them. Lock traffic is everything except
 * the binding itself and long-lived watch streams: node GETs and PATCHes, and owner-pod GETs of
 * liveness checks.
 *
 * @param lockGets GET requests (nodes and pods)
 * @param lockPatches PATCH requests
 * @param lockOther other lock-related requests (LIST, PUT, …)
 * @param bindings {@code create pods/binding}
 * @param watches watch requests opened during the run (not per member)
 */
public record RequestMix(
    long lockGets, long lockPatches, long lockOther, long bindings, long watches) {

  /**
   * @param counts emulator counters of one run
   */
  public static RequestMix of(Map<RequestKey, Long> counts) {
    long gets = 0;
    long patches = 0;
    long other = 0;
    long bindings = 0;
    long watches = 0;
    for (Map.Entry<RequestKey, Long> e : counts.entrySet()) {
      String verb = e.getKey().verb();
      long n = e.getValue();
      if (verb.equals("watch")) {
        watches += n;
      } else if (verb.equals("create") && e.getKey().resource().equals("pods/binding")) {
        bindings += n;
      } else if (verb.equals("get")) {
        gets += n;
      } else if (verb.equals("patch")) {
        patches += n;
      } else {
        other += n;
      }
    }
    return new RequestMix(gets, patches, other, bindings, watches);
  }

  /**
   * @return all lock requests (GET + PATCH + other)
   */
  public long lockTotal() {
    return lockGets + lockPatches + lockOther;
  }
}
