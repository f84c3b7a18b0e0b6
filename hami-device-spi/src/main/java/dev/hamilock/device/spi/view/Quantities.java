package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Objects;

/**
 * Exact parser for Kubernetes resource quantities ({@code 3000}, {@code 16Gi}, {@code 1.5}, {@code
 * 500m}, {@code 8Ki}, {@code 1e3}) into {@link BigDecimal}, without the rounding the Kubernetes
 * {@code Quantity} type applies (grammar of {@code
 * k8s.io/apimachinery/pkg/api/resource/quantity.go}).
 *
 * <p>Grammar: optional sign, digits with an optional single {@code .} (at least one digit), then
 * one suffix: binary {@code Ki Mi Gi Ti Pi Ei}, decimal {@code n u m k M G T P E} or none, or a
 * decimal exponent {@code e}/{@code E} followed by an optionally signed integer.
 */
public final class Quantities {
  /**
   * Largest accepted decimal exponent magnitude (beyond it values are not meaningful resources).
   */
  public static final int MAX_EXPONENT = 64;

  private Quantities() {}

  /**
   * Parses one quantity exactly.
   *
   * @param text quantity text, e.g. {@code 16Gi}; surrounding whitespace is not allowed
   * @return the exact value (e.g. {@code 16Gi} = 17179869184, {@code 500m} = 0.5)
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
    String number = text.substring(numStart, i);
    if (number.endsWith(".")) {
      number = number.substring(0, number.length() - 1);
    }
    if (number.startsWith(".")) {
      number = "0" + number;
    }
    BigDecimal value = new BigDecimal(number);
    String suffix = text.substring(i);
    value = applySuffix(text, value, suffix);
    return negative ? value.negate() : value;
  }

  private static BigDecimal applySuffix(String text, BigDecimal value, String suffix)
      throws InvalidQuantityException {
    switch (suffix) {
      case "":
        return value;
      case "Ki":
        return value.multiply(pow2(10));
      case "Mi":
        return value.multiply(pow2(20));
      case "Gi":
        return value.multiply(pow2(30));
      case "Ti":
        return value.multiply(pow2(40));
      case "Pi":
        return value.multiply(pow2(50));
      case "Ei":
        return value.multiply(pow2(60));
      case "n":
        return value.scaleByPowerOfTen(-9);
      case "u":
        return value.scaleByPowerOfTen(-6);
      case "m":
        return value.scaleByPowerOfTen(-3);
      case "k":
        return value.scaleByPowerOfTen(3);
      case "M":
        return value.scaleByPowerOfTen(6);
      case "G":
        return value.scaleByPowerOfTen(9);
      case "T":
        return value.scaleByPowerOfTen(12);
      case "P":
        return value.scaleByPowerOfTen(15);
      case "E":
        return value.scaleByPowerOfTen(18);
      default:
        break;
    }
    char e = suffix.charAt(0);
    if ((e == 'e' || e == 'E') && suffix.length() > 1) {
      String exp = suffix.substring(1);
      int start = exp.charAt(0) == '+' || exp.charAt(0) == '-' ? 1 : 0;
      if (start == exp.length() || exp.length() - start > 3) {
        throw new InvalidQuantityException(text, "bad exponent \"" + suffix + "\"");
      }
      for (int k = start; k < exp.length(); k++) {
        if (exp.charAt(k) < '0' || exp.charAt(k) > '9') {
          throw new InvalidQuantityException(text, "bad exponent \"" + suffix + "\"");
        }
      }
      int x = Integer.parseInt(exp);
      if (Math.abs(x) > MAX_EXPONENT) {
        throw new InvalidQuantityException(text, "exponent out of range");
      }
      return value.scaleByPowerOfTen(x);
    }
    throw new InvalidQuantityException(text, "unknown suffix \"" + suffix + "\"");
  }

  private static BigDecimal pow2(int bits) {
    return new BigDecimal(BigInteger.ONE.shiftLeft(bits));
  }

  /**
   * Whether the value is an exact integer (no fractional part), e.g. {@code 16Gi} yes, {@code 1.5}
   * and {@code 500m} no.
   *
   * @param value a parsed quantity
   * @return true when {@code value} has no fractional part
   */
  public static boolean isInteger(BigDecimal value) {
    return value.signum() == 0 || value.stripTrailingZeros().scale() <= 0;
  }
}
