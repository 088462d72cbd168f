package io.gnomon.bench;

import java.util.List;
import java.util.Locale;

/**
 * One row of a benchmark report: the Gnomon figure, the side-by-side baseline from the same run, and
 * their ratio. {@code ratio} is {@code value / baseline} (for {@link #pairedRatios} the median of the per-repeat
 * ratios); each metric picks its unit so that
 * this reads in the direction of its target (throughput for "at least" targets, time or bytes for
 * "at most" targets).
 *
 * @param metric the metric's name, such as {@code update_1c_tracked_vs_untracked}
 * @param value the tracked (Gnomon) figure: the median over repeats
 * @param unit the unit of {@code value} and {@code baseline}
 * @param baseline the comparison figure from the same run (median), or {@code null} when none
 * @param ratio {@code value / baseline} (or the median per-repeat ratio, see {@link #pairedRatios}), or {@code null}
 *     without a baseline
 * @param ratioMin the smallest per-repeat ratio (the spread), or {@code null}
 * @param ratioMax the largest per-repeat ratio, or {@code null} (the JSON also carries {@code
 *     best_ratio}, see {@link #bestRatio()})
 * @param runs the per-repeat pairs {@code [value, baseline]} in the order they were measured
 * @param target the target, such as {@code <= 2.0}, or {@code null}
 * @param note how it was measured, in a few words
 */
record Metric(
    String metric,
    double value,
    String unit,
    Double baseline,
    Double ratio,
    Double ratioMin,
    Double ratioMax,
    List<double[]> runs,
    Target target,
    String note) {

  /** A metric from per-repeat pairs; value and baseline are medians, the ratio is their quotient. */
  static Metric paired(String metric, String unit, List<double[]> runs, Target target, String note) {
    double value = Stats.median(runs.stream().mapToDouble(r -> r[0]).toArray());
    double baseline = Stats.median(runs.stream().mapToDouble(r -> r[1]).toArray());
    double[] ratios = runs.stream().mapToDouble(r -> r[0] / r[1]).toArray();
    return new Metric(
        metric, value, unit, baseline, value / baseline, Stats.min(ratios), Stats.max(ratios),
        List.copyOf(runs), target, note);
  }

  /**
   * A metric from per-repeat pairs whose ratio is the median of the per-repeat ratios (value and baseline are still
   * the medians of each side): for pairs measured at the same moments, where each pair's ratio is the measurement
   * and the absolute figures move with the machine's load from one pair to the next.
   */
  static Metric pairedRatios(String metric, String unit, List<double[]> runs, Target target, String note) {
    double value = Stats.median(runs.stream().mapToDouble(r -> r[0]).toArray());
    double baseline = Stats.median(runs.stream().mapToDouble(r -> r[1]).toArray());
    double[] ratios = runs.stream().mapToDouble(r -> r[0] / r[1]).toArray();
    return new Metric(
        metric, value, unit, baseline, Stats.median(ratios), Stats.min(ratios), Stats.max(ratios),
        List.copyOf(runs), target, note);
  }

  /** A metric without a per-repeat spread (a single measurement or an aggregate). */
  static Metric single(String metric, double value, String unit, Double baseline, Target target, String note) {
    Double ratio = baseline == null ? null : value / baseline;
    List<double[]> runs = baseline == null ? List.of() : List.<double[]>of(new double[] {value, baseline});
    return new Metric(metric, value, unit, baseline, ratio, ratio, ratio, runs, target, note);
  }

  /**
   * The issue's own name for a figure that the group reports in parts (such as an UPDATE and a point read): this
   * metric under {@code name}, with {@code note} saying which part it is.
   */
  Metric as(String name, String note) {
    return new Metric(name, value, unit, baseline, ratio, ratioMin, ratioMax, runs, target, note);
  }

  /** Of metrics with ratios, the one with the lowest ratio (the part furthest from an at-least target). */
  static Metric lowestRatio(List<Metric> metrics) {
    return metrics.stream().min(java.util.Comparator.comparingDouble(Metric::ratio)).orElseThrow();
  }

  /** Whether the target is met, or {@code null} when the metric has none. */
  Boolean met() {
    if (target == null) {
      return null;
    }
    if (target.onValue()) {
      return target.isMet(value, null, null);
    }
    return ratio == null ? null : target.isMet(ratio, ratioMin, ratioMax);
  }

  /** The row as one JSON object. */
  String toJson() {
    StringBuilder b = new StringBuilder("{");
    b.append("\"metric\": ").append(Json.string(metric));
    b.append(", \"value\": ").append(Json.number(value));
    b.append(", \"unit\": ").append(Json.string(unit));
    b.append(", \"baseline\": ").append(baseline == null ? "null" : Json.number(baseline));
    b.append(", \"ratio\": ").append(ratio == null ? "null" : Json.number(ratio));
    b.append(", \"ratio_min\": ").append(ratioMin == null ? "null" : Json.number(ratioMin));
    b.append(", \"ratio_max\": ").append(ratioMax == null ? "null" : Json.number(ratioMax));
    Double best = bestRatio();
    b.append(", \"best_ratio\": ").append(best == null ? "null" : Json.number(best));
    b.append(", \"repeats\": ").append(runs.size());
    b.append(", \"runs\": [");
    for (int i = 0; i < runs.size(); i++) {
      b.append(i == 0 ? "" : ", ").append('[').append(Json.number(runs.get(i)[0])).append(", ")
          .append(Json.number(runs.get(i)[1])).append(']');
    }
    b.append(']');
    b.append(", \"target\": ").append(target == null ? "null" : Json.string(target.toString()));
    Boolean met = met();
    b.append(", \"met\": ").append(met == null ? "null" : met.toString());
    b.append(", \"note\": ").append(note == null ? "null" : Json.string(note));
    return b.append('}').toString();
  }

  /**
   * The ratio of the best repeat of each side (the highest throughput, or the lowest time or size):
   * on a machine shared with other work, slowdowns only add, so the best repeats are the closest to
   * the cost of the work itself. {@code null} with fewer than two repeats.
   */
  Double bestRatio() {
    if (runs.size() < 2) {
      return null;
    }
    boolean higherIsBetter = "tps".equals(unit);
    double v = higherIsBetter ? runs.stream().mapToDouble(r -> r[0]).max().getAsDouble()
        : runs.stream().mapToDouble(r -> r[0]).min().getAsDouble();
    double b = higherIsBetter ? runs.stream().mapToDouble(r -> r[1]).max().getAsDouble()
        : runs.stream().mapToDouble(r -> r[1]).min().getAsDouble();
    return v / b;
  }

  /** The spread as text, {@code 0.97-1.03}, or empty. */
  String spread() {
    if (ratioMin == null || runs.size() < 2) {
      return "";
    }
    return String.format(Locale.ROOT, "%.2f-%.2f", ratioMin, ratioMax);
  }
}
