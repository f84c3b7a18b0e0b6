package dev.hamilock.extender;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a caller may read in an {@code Error} or a plain-text error body: no Java class names or
 * stack traces, every long value shortened. A token (a run without whitespace) longer than {@link
 * #MAX_TOKEN} characters keeps its first {@link #KEEP} characters and says how many were cut; the
 * whole message is cut at {@link #MAX_MESSAGE} characters.
 */
public final class CallerMessages {
  /** Longest token passed unchanged: 128 characters. */
  public static final int MAX_TOKEN = 128;

  /** Characters kept of a longer token: 64. */
  public static final int KEEP = 64;

  /** Longest message: 1024 characters (before the cut marker). */
  public static final int MAX_MESSAGE = 1024;

  private static final Pattern QUALIFIED_THROWABLE =
      Pattern.compile(
          "\\b(?:[a-z_][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*(?:Exception|Error|Throwable)\\b:?\\s*");
  private static final Pattern STACK_FRAME = Pattern.compile("\\s*\\bat [\\w$.]+\\([^)]*\\)");
  private static final Pattern LONG_TOKEN = Pattern.compile("\\S{" + (MAX_TOKEN + 1) + ",}");

  private CallerMessages() {}

  /**
   * A message for a remote caller (null: empty) without qualified exception class names or stack
   * frames, its long tokens and the whole message shortened.
   */
  public static String safe(String message) {
    if (message == null) {
      return "";
    }
    String s = STACK_FRAME.matcher(message).replaceAll("");
    s = QUALIFIED_THROWABLE.matcher(s).replaceAll("");
    Matcher m = LONG_TOKEN.matcher(s);
    StringBuilder out = new StringBuilder(Math.min(s.length(), MAX_MESSAGE + 64));
    while (m.find()) {
      String t = m.group();
      m.appendReplacement(
          out,
          Matcher.quoteReplacement(
              t.substring(0, KEEP) + "...(" + (t.length() - KEEP) + " more characters)"));
    }
    m.appendTail(out);
    if (out.length() > MAX_MESSAGE) {
      int cut = out.length() - MAX_MESSAGE;
      out.setLength(MAX_MESSAGE);
      out.append("...(").append(cut).append(" more characters)");
    }
    return out.toString().strip();
  }
}
