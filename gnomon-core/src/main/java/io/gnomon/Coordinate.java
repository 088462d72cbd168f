package io.gnomon;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A point in history that makes past reads exact: a PostgreSQL snapshot ({@code pg_current_snapshot()}).
 * A read as of a coordinate returns precisely what a transaction that ran at it saw.
 *
 * <p>Its text form is versioned and stable — {@code v1:xmin:xmax:xip,…}, for example {@code v1:7420:7424:7421,7423}
 * — so it can be stored and passed back: {@code Coordinate.parse(c.toString()).equals(c)}.
 *
 * @param xmin the oldest transaction still running at the coordinate
 * @param xmax one past the newest transaction that had started
 * @param inProgress the transactions between them that had not committed, ascending
 */
public record Coordinate(long xmin, long xmax, List<Long> inProgress) {
  private static final String PREFIX = "v1:";

  /** Validates the parts: {@code xmin <= every in-progress xid < xmax}. */
  public Coordinate {
    Objects.requireNonNull(inProgress, "inProgress");
    if (xmin < 1 || xmax < xmin) {
      throw new IllegalArgumentException("coordinate needs 1 <= xmin <= xmax, got xmin=" + xmin + " xmax=" + xmax);
    }
    long previous = -1;
    for (long x : inProgress) {
      if (x < xmin || x >= xmax || x <= previous) {
        throw new IllegalArgumentException(
            "in-progress xids must be ascending within [xmin, xmax), got " + inProgress + " for " + xmin + ":" + xmax);
      }
      previous = x;
    }
    inProgress = List.copyOf(inProgress);
  }

  /** A coordinate from its parts. */
  public static Coordinate of(long xmin, long xmax, List<Long> inProgress) {
    return new Coordinate(xmin, xmax, inProgress);
  }

  /**
   * Parses the text form returned by {@link #toString()} or by {@code gnomon.coordinate()}.
   *
   * @throws MalformedCoordinateException when the text is not a coordinate
   */
  public static Coordinate parse(String text) {
    if (text == null || !text.startsWith(PREFIX)) {
      throw malformed(text, "it must start with \"" + PREFIX + "\"");
    }
    String[] parts = text.substring(PREFIX.length()).split(":", -1);
    if (parts.length != 3) {
      throw malformed(text, "it must have the form v1:xmin:xmax:xip,…");
    }
    try {
      long xmin = Long.parseLong(parts[0]);
      long xmax = Long.parseLong(parts[1]);
      List<Long> xip = new ArrayList<>();
      if (!parts[2].isEmpty()) {
        for (String x : parts[2].split(",", -1)) {
          xip.add(Long.parseLong(x));
        }
      }
      return new Coordinate(xmin, xmax, xip);
    } catch (IllegalArgumentException e) {
      throw malformed(text, e.getMessage());
    }
  }

  /** Whether a transaction id is visible (committed before the coordinate), as {@code pg_visible_in_snapshot}. */
  public boolean sees(long xid) {
    return xid < xmin || (xid < xmax && Collections.binarySearch(inProgress, xid) < 0);
  }

  /** The stable text form, {@code v1:xmin:xmax:xip,…}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder(PREFIX).append(xmin).append(':').append(xmax).append(':');
    for (int i = 0; i < inProgress.size(); i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append(inProgress.get(i));
    }
    return b.toString();
  }

  private static MalformedCoordinateException malformed(String text, String why) {
    String shown = text == null ? "null" : text.length() > 100 ? text.substring(0, 100) + "…" : text;
    return new MalformedCoordinateException(
        "malformed coordinate '" + shown + "': " + why
            + ". Pass back a value returned by gnomon.coordinate() or Coordinate.toString() unchanged.",
        null);
  }
}
