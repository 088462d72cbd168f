package io.gnomon.feed;

import io.gnomon.Coordinate;
import java.util.Objects;

/**
 * Where a new consumer starts: {@link #now()}, {@link #at(Coordinate) at a coordinate} (every change not visible at
 * it), or {@link #backfill()}: now, after reading every row of its tables as of its start coordinate with {@link
 * Feed#backfill}, with no gap and no overlap between the rows and the changes.
 *
 * @param kind how it starts
 * @param coordinate the coordinate of {@link Kind#AT}, null otherwise
 */
public record FeedStart(Kind kind, Coordinate coordinate) {
  /** How a consumer starts. */
  public enum Kind {
    /** With the changes committed after registration. */
    NOW,
    /** With the changes not visible at a coordinate. */
    AT,
    /** Like {@link #NOW}; the caller first reads every row as of the start coordinate ({@link Feed#backfill}). */
    BACKFILL
  }

  /** Validates that exactly {@link Kind#AT} has a coordinate. */
  public FeedStart {
    Objects.requireNonNull(kind, "kind");
    if ((kind == Kind.AT) != (coordinate != null)) {
      throw new IllegalArgumentException(
          kind == Kind.AT ? "FeedStart.at needs a coordinate" : "only FeedStart.at takes a coordinate");
    }
  }

  /** Start with the changes committed after registration. */
  public static FeedStart now() {
    return new FeedStart(Kind.NOW, null);
  }

  /** Start with every change not visible at {@code coordinate} (captured after the tables were tracked). */
  public static FeedStart at(Coordinate coordinate) {
    return new FeedStart(Kind.AT, Objects.requireNonNull(coordinate, "coordinate"));
  }

  /** Start now, and read every row as of the start coordinate first with {@link Feed#backfill}. */
  public static FeedStart backfill() {
    return new FeedStart(Kind.BACKFILL, null);
  }

  /** The {@code start} argument of {@code gnomon.feed_register}. */
  String sql() {
    return kind == Kind.AT ? coordinate.toString() : "now";
  }
}
