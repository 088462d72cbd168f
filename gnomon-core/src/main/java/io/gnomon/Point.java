package io.gnomon;

import java.util.Objects;
import java.util.Optional;

/**
 * Where to read a table, diff from or to: main or a branch, now or as of a coordinate. In SQL it is
 * {@code gnomon.point(branch, coordinate)}.
 *
 * <pre>{@code
 * Point.main();                       // main now
 * Point.main(c);                      // main as of coordinate c
 * Point.branch("feature");            // branch feature now
 * Point.branch("feature", c);         // branch feature as of c
 * }</pre>
 *
 * @param branch the branch's name, {@code "main"} for main
 * @param coordinate the coordinate to read at, or empty for now
 */
public record Point(String branch, Optional<Coordinate> coordinate) {
  /** Name of main in points and in {@code gnomon.branch_use}. */
  public static final String MAIN = "main";

  /** Checks the parts. */
  public Point {
    Objects.requireNonNull(branch, "branch (use Point.main() for main)");
    Objects.requireNonNull(coordinate, "coordinate (use Optional.empty() for now)");
  }

  /** Main now. */
  public static Point main() {
    return new Point(MAIN, Optional.empty());
  }

  /** Main as of a coordinate. */
  public static Point main(Coordinate at) {
    return new Point(MAIN, Optional.of(at));
  }

  /** A branch now. */
  public static Point branch(String name) {
    return new Point(name, Optional.empty());
  }

  /** A branch as of a coordinate (at or after the branch's creation). */
  public static Point branch(String name, Coordinate at) {
    return new Point(name, Optional.of(at));
  }

  /** Whether this point is on main. */
  public boolean onMain() {
    return MAIN.equals(branch);
  }

  /** The coordinate's text, or null for now (the second argument of {@code gnomon.point}). */
  String coordinateText() {
    return coordinate.map(Coordinate::toString).orElse(null);
  }

  @Override
  public String toString() {
    return branch + coordinate.map(c -> "@" + c).orElse("");
  }
}
