package dev.hamilock.testing.generators;

import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.quicktheories.QuickTheory;
import org.quicktheories.api.AsString;
import org.quicktheories.core.ExceptionReporter;
import org.quicktheories.core.Reporter;

/**
 * How this project runs a QuickTheories property inside a plain JUnit 5 {@code @Test}.
 *
 * <pre>{@code
 * Props.qt(300).forAll(gen).checkAssert(x -> Props.unchecked(() -> body(x)));
 * }</pre>
 *
 * <ul>
 *   <li>Exactly {@code examples} generated examples at most (QuickTheories skips an example whose
 *       randomness it has already tried, so a tiny domain runs fewer; properties over tiny domains
 *       enumerate them instead).
 *   <li>Seed: fresh per run ({@code System.nanoTime()}, QuickTheories' default) unless {@code
 *       -Dhamilock.seed=N} (Maven passes {@code -D} user properties on to the test JVM) or
 *       QuickTheories' own {@code -DQT_SEED=N} is set; the same seed generates the same examples.
 *   <li>A failure is an {@link AssertionError} naming the shrunk (smallest) counterexample, the
 *       failure it caused, other counterexamples, the seed, and the command line that replays it.
 *   <li>Shrinking: at most {@link #DEFAULT_SHRINK_CYCLES} re-runs unless the caller chains {@link
 *       QuickTheory#withShrinkCycles(int)} (costly, concurrent properties use fewer; 0 turns it
 *       off). QuickTheories shrinks the recorded randomness, so it works through {@code map},
 *       {@code zip} and lists; through {@code flatMap} it is weaker (a shrunk draw can change which
 *       generator the rest of the draws feed).
 * </ul>
 */
public final class Props {
  /** System property replaying a seed: {@code -Dhamilock.seed=N}. */
  public static final String SEED_PROPERTY = "hamilock.seed";

  /** QuickTheories' own seed property (honoured too). */
  public static final String QT_SEED_PROPERTY = "QT_SEED";

  /**
   * Shrink re-runs unless the caller chains another count (QuickTheories' own default is 100,000).
   */
  public static final int DEFAULT_SHRINK_CYCLES = 2_000;

  private Props() {}

  /**
   * @param examples examples to run
   * @return the theory, seeded and reporting as described above
   */
  public static QuickTheory qt(int examples) {
    if (examples < 1) {
      throw new IllegalArgumentException("examples must be positive: " + examples);
    }
    QuickTheory q =
        QuickTheory.qt()
            .withExamples(examples)
            .withShrinkCycles(DEFAULT_SHRINK_CYCLES)
            .withReporter(new ReplayingReporter(caller()));
    Optional<Long> seed = fixedSeed();
    return seed.isPresent() ? q.withFixedSeed(seed.get()) : q;
  }

  /**
   * The teeth of a property: runs it (no shrinking, reporting captured) and returns the failure of
   * the first counterexample.
   *
   * @param examples examples to try
   * @param property runs {@code forAll(...).checkAssert(...)} on the theory it is given
   * @return the first counterexample's failure
   * @throws AssertionError if no example falsified the property
   */
  public static Falsified expectFalsified(int examples, Consumer<QuickTheory> property) {
    Capture capture = new Capture();
    QuickTheory q =
        QuickTheory.qt().withExamples(examples).withShrinkCycles(0).withReporter(capture);
    Optional<Long> seed = fixedSeed();
    try {
      property.accept(seed.isPresent() ? q.withFixedSeed(seed.get()) : q);
    } catch (Stop expected) {
      return capture.result;
    }
    throw new AssertionError("expected a counterexample in " + examples + " examples, found none");
  }

  /** A body that may throw checked exceptions. */
  @FunctionalInterface
  public interface Body {
    /**
     * @throws Exception anything; rethrown unchanged by {@link #unchecked(Body)}
     */
    void run() throws Exception;
  }

  /**
   * Runs a property body inside QuickTheories' {@code checkAssert} (which takes a plain {@code
   * Consumer}), rethrowing a checked exception unchanged so the report shows it as it is.
   *
   * @param body the body
   */
  public static void unchecked(Body body) {
    try {
      body.run();
    } catch (Exception e) {
      throw Props.<RuntimeException>sneaky(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  /**
   * @param seed the seed the failing run used
   * @param example the counterexample (as the generator prints it)
   * @param cause what the property threw for it
   */
  public record Falsified(long seed, String example, Throwable cause) {}

  private static Optional<Long> fixedSeed() {
    String v = System.getProperty(SEED_PROPERTY);
    if (v == null || v.isBlank()) {
      return Optional.empty(); // QuickTheories itself reads QT_SEED, else uses System.nanoTime()
    }
    try {
      return Optional.of(Long.parseLong(v.trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "-D" + SEED_PROPERTY + " must be a long: \"" + v + "\"", e);
    }
  }

  /** {@code Class#method} of the test that asked for the theory. */
  private static String caller() {
    return StackWalker.getInstance()
        .walk(
            frames ->
                frames
                    .filter(f -> !f.getClassName().equals(Props.class.getName()))
                    .findFirst()
                    .map(
                        f -> {
                          String cls = f.getClassName();
                          int nested = cls.indexOf('$');
                          String top = nested < 0 ? cls : cls.substring(0, nested);
                          return top.substring(top.lastIndexOf('.') + 1) + "#" + f.getMethodName();
                        })
                    .orElse("?"));
  }

  /** QuickTheories' report plus the replay command. */
  private static final class ReplayingReporter implements Reporter {
    private final ExceptionReporter delegate = new ExceptionReporter();
    private final String test;

    ReplayingReporter(String test) {
      this.test = test;
    }

    @Override
    public void falisification(
        long seed,
        int count,
        Object smallest,
        Throwable cause,
        List<Object> examples,
        AsString<Object> toString) {
      try {
        delegate.falisification(seed, count, smallest, cause, examples, toString);
      } catch (AssertionError e) {
        throw withReplay(e, seed);
      }
    }

    @Override
    public void falisification(
        long seed, int count, Object smallest, List<Object> examples, AsString<Object> toString) {
      try {
        delegate.falisification(seed, count, smallest, examples, toString);
      } catch (AssertionError e) {
        throw withReplay(e, seed);
      }
    }

    @Override
    public void valuesExhausted(int completedExamples) {
      delegate.valuesExhausted(completedExamples);
    }

    private AssertionError withReplay(AssertionError e, long seed) {
      return new AssertionError(
          e.getMessage()
              + System.lineSeparator()
              + "Replay: mvn -B verify -Dtest='"
              + test
              + "' -Dsurefire.failIfNoSpecifiedTests=false -D"
              + SEED_PROPERTY
              + "="
              + seed);
    }
  }

  /** Thrown by {@link Capture} to end a run at its first counterexample. */
  private static final class Stop extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Stop() {
      super(null, null, false, false);
    }
  }

  private static final class Capture implements Reporter {
    Falsified result;

    @Override
    public void falisification(
        long seed,
        int count,
        Object smallest,
        Throwable cause,
        List<Object> examples,
        AsString<Object> toString) {
      result = new Falsified(seed, toString.asString(smallest), cause);
      throw new Stop();
    }

    @Override
    public void falisification(
        long seed, int count, Object smallest, List<Object> examples, AsString<Object> toString) {
      result =
          new Falsified(
              seed, toString.asString(smallest), new AssertionError("property returned false"));
      throw new Stop();
    }

    @Override
    public void valuesExhausted(int completedExamples) {
      throw new AssertionError(
          "gave up after " + completedExamples + " examples matching the assumptions");
    }
  }
}
