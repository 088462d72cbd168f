package io.gnomon.bench;

import java.util.Arrays;

/** Medians and extremes of repeated measurements. */
final class Stats {
  private Stats() {}

  static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  static double min(double[] xs) {
    return Arrays.stream(xs).min().orElse(Double.NaN);
  }

  static double max(double[] xs) {
    return Arrays.stream(xs).max().orElse(Double.NaN);
  }
}
