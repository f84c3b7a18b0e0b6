package dev.hamilock.k8s.internal;

import java.time.Duration;

/** Argument checks naming the setting and the bad value. Not part of the public API. */
public final class Validation {

    private Validation() {
    }

    /**
     * @param name setting name
     * @param d    value
     * @return {@code d}
     * @throws IllegalArgumentException naming the setting if {@code d} is null, zero or negative
     */
    public static Duration positive(String name, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive: " + d);
        }
        return d;
    }

    /**
     * @param name setting name
     * @param d    value
     * @return {@code d}
     * @throws IllegalArgumentException naming the setting if {@code d} is null or negative
     */
    public static Duration notNegative(String name, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative: " + d);
        }
        return d;
    }

    /**
     * @param name setting name
     * @param n    attempts per operation
     * @return {@code n}
     * @throws IllegalArgumentException naming the setting and value if {@code n} is outside 1..100
     */
    public static int attempts(String name, int n) {
        if (n < 1 || n > 100) {
            throw new IllegalArgumentException(name + " must be 1..100: " + n);
        }
        return n;
    }
}
