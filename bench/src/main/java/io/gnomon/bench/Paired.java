package io.gnomon.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

/** Side-by-side repeats: each repeat measures both sides, alternating which goes first. */
final class Paired {
  private Paired() {}

  /**
   * Runs {@code repeats} pairs; in even repeats {@code value} goes first, in odd ones {@code
   * baseline}.
   *
   * @return per repeat, {@code [value, baseline]}
   */
  static List<double[]> alternate(int repeats, DoubleSupplier value, DoubleSupplier baseline) {
    List<double[]> runs = new ArrayList<>();
    for (int r = 0; r < repeats; r++) {
      double v;
      double b;
      if (Budget.trackedFirst(r)) {
        v = value.getAsDouble();
        b = baseline.getAsDouble();
      } else {
        b = baseline.getAsDouble();
        v = value.getAsDouble();
      }
      runs.add(new double[] {v, b});
    }
    return runs;
  }
}
