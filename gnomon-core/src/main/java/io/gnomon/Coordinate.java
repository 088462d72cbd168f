package io.gnomon;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A point in history that makes past reads exact: a PostgreSQL snapshot ({@code pg_current_snapshot()}) and the server
 * incarnation it was captured in. A read as of a coordinate returns precisely what a transaction that ran at it saw.
 *
 * <p>Its text form is versioned and stable — {@code v2:incarnation:xmin:xmax:xip,…}, for example
 * {@code v2:1796130898995571:7420:7424:7421,7423} — so it can be stored and passed back:
 * {@code Coordinate.parse(c.toString()).equals(c)}. The incarnation ({@code gnomon.incarnation()}) changes with every
 * crash recovery or failover of the server; a coordinate captured before one stays readable when a tick recorded after
 * it survived, and is otherwise refused with {@link CoordinateLostException} rather than read inexactly. The older form
 * {@code v1:xmin:xmax:xip,…} (a bare snapshot, incarnation 0) is still accepted; it names no incarnation, so the
 * database guards it as one of the earliest incarnation it recorded (readable up to that incarnation's last surviving
 * tick once a crash or failover has happened since).
 *
 * @param incarnation the server incarnation the snapshot belongs to; 0 for the older form, which names none
 * @param xmin the oldest transaction still running at the coordinate
 * @param xmax one past the newest transaction that had started
 * @param inProgress the transactions between them that had not committed, ascending
 */
public record Coordinate(long incarnation, long xmin, long xmax, List<Long> inProgress) {
  private static final String V1 = "v1:";
  private static final String V2 = "v2:";

  /** Validates the parts: {@code xmin <= every in-progress xid < xmax}, incarnation not negative. */
  public Coordinate {
    Objects.requireNonNull(inProgress, "inProgress");
    if (incarnation < 0) {
      throw new IllegalArgumentException("coordinate incarnation must not be negative, got " + incarnation);
    }
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

  /** A bare snapshot, in the older form that names no incarnation ({@code v1:…}). */
  public static Coordinate of(long xmin, long xmax, List<Long> inProgress) {
    return new Coordinate(0, xmin, xmax, inProgress);
  }

  /** A coordinate from its parts. */
  public static Coordinate of(long incarnation, long xmin, long xmax, List<Long> inProgress) {
    return new Coordinate(incarnation, xmin, xmax, inProgress);
  }

  /**
   * Parses the text form returned by {@link #toString()} or by {@code gnomon.coordinate()}.
   *
   * @throws MalformedCoordinateException when the text is not a coordinate
   */
  public static Coordinate parse(String text) {
    if (text == null || !(text.startsWith(V2) || text.startsWith(V1))) {
      throw malformed(text, "it must start with \"" + V2 + "\"");
    }
    boolean v2 = text.startsWith(V2);
    String[] parts = text.substring(V2.length()).split(":", -1);
    if (parts.length != (v2 ? 4 : 3)) {
      throw malformed(text, "it must have the form " + (v2 ? "v2:incarnation:xmin:xmax:xip,…" : "v1:xmin:xmax:xip,…"));
    }
    try {
      int i = 0;
      long incarnation = v2 ? digits(parts[i++]) : 0;
      long xmin = digits(parts[i++]);
      long xmax = digits(parts[i++]);
      List<Long> xip = new ArrayList<>();
      if (!parts[i].isEmpty()) {
        for (String x : parts[i].split(",", -1)) {
          xip.add(digits(x));
        }
      }
      if (v2 && incarnation == 0) {
        throw new IllegalArgumentException("the incarnation of a v2 coordinate is never 0");
      }
      return new Coordinate(incarnation, xmin, xmax, xip);
    } catch (IllegalArgumentException e) {
      throw malformed(text, e.getMessage());
    }
  }

  private static long digits(String s) {
    if (s.isEmpty() || s.length() > 20 || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new IllegalArgumentException("\"" + s + "\" is not a number");
    }
    return Long.parseLong(s);
  }

  /** Whether a transaction id is visible (committed before the coordinate), as {@code pg_visible_in_snapshot}. */
  public boolean sees(long xid) {
    return xid < xmin || (xid < xmax && Collections.binarySearch(inProgress, xid) < 0);
  }

  /** The stable text form, {@code v2:incarnation:xmin:xmax:xip,…} ({@code v1:xmin:xmax:xip,…} for incarnation 0). */
  @Override
  public String toString() {
    StringBuilder b = incarnation == 0 ? new StringBuilder(V1) : new StringBuilder(V2).append(incarnation).append(':');
    b.append(xmin).append(':').append(xmax).append(':');
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
