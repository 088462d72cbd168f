package io.gnomon.feed;

import io.gnomon.InvalidPositionException;
import java.util.Comparator;

/**
 * Where a consumer is in the feed: every batch up to {@code tick} is delivered, and of the next batch every event
 * ordered at or before ({@code txnKey}, {@code vid}) — (0, 0) when none of it is.
 *
 * <p>Its text form is versioned and stable, {@code v1:tick:txnKey:vid} (for example {@code v1:42:0:0}), like a
 * Debezium offset: store it, log it, pass it back. {@code FeedPosition.parse(p.toString()).equals(p)}. Positions are
 * ordered; a consumer's acknowledged position never goes backwards.
 *
 * @param tick the last tick whose batch is wholly delivered
 * @param txnKey the ordering key of the last delivered transaction of the next batch (its largest version key), or 0
 * @param vid the version key of the last delivered event of that transaction, or 0
 */
public record FeedPosition(long tick, long txnKey, long vid) implements Comparable<FeedPosition> {
  private static final String PREFIX = "v1:";
  private static final Comparator<FeedPosition> ORDER =
      Comparator.comparingLong(FeedPosition::tick)
          .thenComparingLong(FeedPosition::txnKey)
          .thenComparingLong(FeedPosition::vid);

  /** The position before every batch. */
  public static final FeedPosition START = new FeedPosition(0, 0, 0);

  /** Validates the parts: none negative, and a vid exactly when there is a transaction key. */
  public FeedPosition {
    if (tick < 0 || txnKey < 0 || vid < 0) {
      throw new IllegalArgumentException(
          "a feed position has no negative part, got tick=" + tick + " txnKey=" + txnKey + " vid=" + vid);
    }
    if ((txnKey == 0) != (vid == 0)) {
      throw new IllegalArgumentException(
          "a feed position has both txnKey and vid or neither, got txnKey=" + txnKey + " vid=" + vid);
    }
  }

  /** A position from its parts. */
  public static FeedPosition of(long tick, long txnKey, long vid) {
    return new FeedPosition(tick, txnKey, vid);
  }

  /** The position after every batch up to and including {@code tick}. */
  public static FeedPosition afterTick(long tick) {
    return new FeedPosition(tick, 0, 0);
  }

  /**
   * Parses the text form returned by {@link #toString()} or by {@code gnomon.feed_read()}.
   *
   * @throws InvalidPositionException when the text is not a position (the same condition as SQLSTATE GN033)
   */
  public static FeedPosition parse(String text) {
    if (text == null || !text.startsWith(PREFIX)) {
      throw malformed(text, "it must start with \"" + PREFIX + "\"");
    }
    // three numbers separated by ':' after the prefix, scanned in place (called for every event a page reads)
    long[] n = new long[3];
    int from = PREFIX.length();
    for (int i = 0; i < 3; i++) {
      int end = i < 2 ? text.indexOf(':', from) : text.length();
      if (end < 0 || (i == 2 && text.indexOf(':', from) >= 0)) {
        throw malformed(text, "it must have the form v1:tick:txnKey:vid");
      }
      n[i] = number(text, from, end);
      if (n[i] < 0) {
        throw malformed(text, "\"" + text.substring(from, end) + "\" is not a number of 1 to 18 digits");
      }
      from = end + 1;
    }
    try {
      return new FeedPosition(n[0], n[1], n[2]);
    } catch (IllegalArgumentException e) {
      throw malformed(text, e.getMessage());
    }
  }

  /** A number of 1 to 18 ASCII digits, else -1 (no regular expression: a page parses one position per event). */
  private static long number(String s, int from, int end) {
    int length = end - from;
    if (length < 1 || length > 18) {
      return -1;
    }
    long n = 0;
    for (int i = from; i < end; i++) {
      char ch = s.charAt(i);
      if (ch < '0' || ch > '9') {
        return -1;
      }
      n = n * 10 + (ch - '0');
    }
    return n;
  }

  /** Whether this position is after {@code other}. */
  public boolean isAfter(FeedPosition other) {
    return compareTo(other) > 0;
  }

  @Override
  public int compareTo(FeedPosition other) {
    return ORDER.compare(this, other);
  }

  /** The stable text form, {@code v1:tick:txnKey:vid}. */
  @Override
  public String toString() {
    return PREFIX + tick + ':' + txnKey + ':' + vid;
  }

  private static InvalidPositionException malformed(String text, String why) {
    String shown = text == null ? "null" : text.length() > 100 ? text.substring(0, 100) + "…" : text;
    return new InvalidPositionException(
        "malformed feed position '" + shown + "': " + why
            + ". Pass back the position of a page or event returned by the feed unchanged.",
        null);
  }
}
