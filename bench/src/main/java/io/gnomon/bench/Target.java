package io.gnomon.bench;

import java.util.Locale;

/**
 * A metric's target: {@code ratio <= bound}, {@code ratio >= bound}, or {@code ratio = 1} within noise
 * (met when the ratio is at least {@code 1 - tolerance}, or when the per-repeat spread reaches 1).
 *
 * @param kind how the bound applies
 * @param bound the bound
 * @param onValue whether the bound applies to the value itself rather than to the ratio
 */
record Target(Kind kind, double bound, boolean onValue) {

  /** How a target's bound applies. */
  enum Kind {
    AT_MOST,
    AT_LEAST,
    NO_SLOWER
  }

  static Target atMost(double bound) {
    return new Target(Kind.AT_MOST, bound, false);
  }

  static Target atLeast(double bound) {
    return new Target(Kind.AT_LEAST, bound, false);
  }

  /** A bound on the value (bytes, say), not on the ratio. */
  static Target valueAtMost(double bound) {
    return new Target(Kind.AT_MOST, bound, true);
  }

  /** Ratio 1.00 within noise: at least {@code 1 - tolerance}, or the spread reaches 1. */
  static Target noSlower(double tolerance) {
    return new Target(Kind.NO_SLOWER, tolerance, false);
  }

  boolean isMet(double x, Double min, Double max) {
    switch (kind) {
      case AT_MOST:
        return x <= bound;
      case AT_LEAST:
        return x >= bound;
      case NO_SLOWER:
      default:
        return x >= 1 - bound || (max != null && max >= 1.0);
    }
  }

  @Override
  public String toString() {
    switch (kind) {
      case AT_MOST:
        return String.format(Locale.ROOT, onValue ? "value <= %s" : "<= %s", trim(bound));
      case AT_LEAST:
        return String.format(Locale.ROOT, ">= %s", trim(bound));
      case NO_SLOWER:
      default:
        return String.format(Locale.ROOT, "1.00 (>= %s or spread reaches 1)", trim(1 - bound));
    }
  }

  private static String trim(double d) {
    return String.format(Locale.ROOT, d >= 10 ? "%.0f" : "%.2f", d);
  }
}
