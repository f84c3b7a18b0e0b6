package dev.hamilock.benchmarks.convergence;

import java.util.List;

/** The algorithms the suite compares, in report order. */
public final class Algorithms {

    private Algorithms() {
    }

    /**
     * @return (a) HAMi's pod-group polling, (b) fail fast with kube-scheduler backoff, (c) this
     *         library with the watch wake-up, (d) this library polling only
     */
    public static List<Algorithm> all() {
        return List.of(new HamiPollingAlgorithm(), new FailFastBackoffAlgorithm(), new OurLockAlgorithm(true),
                new OurLockAlgorithm(false));
    }
}
