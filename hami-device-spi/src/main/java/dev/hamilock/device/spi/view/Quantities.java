package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Exact parser of Kubernetes resource quantities ({@code 16Gi}, {@code 500m}, {@code 1e3}; grammar
 * of {@code k8s.io/apimachinery/pkg/api/resource/quantity.go}) into {@link BigDecimal}, without the
 * {@code Quantity} type's rounding.
 */
public final class Quantities {
  /** Largest accepted decimal exponent magnitude (beyond it no value is a meaningful resource). */
  public static final int MAX_EXPONENT = 64;

  /** {@code Ki} = 2<sup>10</sup> … {@code Ei} = 2<sup>60</sup>. */
  private static final List<String> BINARY_SUFFIXES = List.of("Ki", "Mi", "Gi", "Ti", "Pi", "Ei");

  /** {@code n} = 10<sup>-9</sup>, … none = 1, … {@code E} = 10<sup>18</sup>. */
  private static final List<String> DECIMAL_SUFFIXES =
      List.of("n", "u", "m", "", "k", "M", "G", "T", "P", "E");

  private static final Pattern EXPONENT = Pattern.compile("[+-]?[0-9]{1,3}");

  private Quantities() {}

  /**
   * Parses one quantity exactly ({@code 16Gi} = 17179869184, {@code 500m} = 0.5), no whitespace.
   *
   * @throws InvalidQuantityException naming the text when it is not a valid quantity
   */
  public static BigDecimal parse(String text) throws InvalidQuantityException {
    Objects.requireNonNull(text, "text");
    int n = text.length();
    if (n == 0) {
      throw new InvalidQuantityException(text, "empty");
    }
    int i = 0;
    boolean negative = false;
    char c0 = text.charAt(0);
    if (c0 == '+' || c0 == '-') {
      negative = c0 == '-';
      i++;
    }
    int numStart = i;
    int digits = 0;
    boolean dot = false;
    while (i < n) {
      char c = text.charAt(i);
      if (c >= '0' && c <= '9') {
        digits++;
      } else if (c == '.' && !dot) {
        dot = true;
      } else {
        break;
      }
      i++;
    }
    if (digits == 0) {
      throw new InvalidQuantityException(text, "missing digits");
    }
    BigDecimal value = new BigDecimal(text.substring(numStart, i)); // accepts "5." and ".5"
    value = applySuffix(text, value, text.substring(i));
    return negative ? value.negate() : value;
  }

  private static BigDecimal applySuffix(String text, BigDecimal value, String suffix)
      throws InvalidQuantityException {
    int binary = BINARY_SUFFIXES.indexOf(suffix);
    if (binary >= 0) {
      return value.multiply(new BigDecimal(BigInteger.ONE.shiftLeft(10 * (binary + 1))));
    }
    int decimal = DECIMAL_SUFFIXES.indexOf(suffix);
    if (decimal >= 0) {
      return value.scaleByPowerOfTen(3 * (decimal - 3));
    }
    char e = suffix.charAt(0);
    if ((e == 'e' || e == 'E') && suffix.length() > 1) {
      String exp = suffix.substring(1);
      if (!EXPONENT.matcher(exp).matches()) {
        throw new InvalidQuantityException(text, "bad exponent \"" + suffix + "\"");
      }
      int x = Integer.parseInt(exp);
      if (Math.abs(x) > MAX_EXPONENT) {
        throw new InvalidQuantityException(text, "exponent out of range");
      }
      return value.scaleByPowerOfTen(x);
    }
    throw new InvalidQuantityException(text, "unknown suffix \"" + suffix + "\"");
  }

  /** Whether the value has no fractional part ({@code 16Gi} yes, {@code 500m} no). */
  public static boolean isInteger(BigDecimal value) {
    return value.signum() == 0 || value.stripTrailingZeros().scale() <= 0;
  }
}
