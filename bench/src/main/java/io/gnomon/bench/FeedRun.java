package io.gnomon.bench;

import io.gnomon.feed.Feed;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.util.List;
import java.util.Locale;

/**
 * What the feed group's measurements share: the cluster, the sizes, the log, one connection to the database, the
 * feed, and the backlog's bounds (the consumers' start snapshot and the last tick's, as {@code pg_snapshot} text).
 */
record FeedRun(PgCluster pg, Budget budget, Sizes sizes, Details log, Pgbench pgbench, Feed feed, Connection c,
    String start, String end) {

  /**
   * How much the group writes and how often it repeats.
   *
   * @param versions versions written to each system's table: the backlog every consumer reads
   * @param repeats repeats of the reads and of each side-by-side consumption
   * @param drainEvents changes drained in pages of 1,000 (152,000; fewer in a quick run, then scaled)
   * @param drainRepeats repeats of the drain
   * @param updatePairs pairs of pgbench runs, with and without a consumer
   * @param updateSeconds the length of each of those runs
   */
  record Sizes(int versions, int repeats, int drainEvents, int drainRepeats, int updatePairs, int updateSeconds) {
    static Sizes of(Budget budget) {
      return budget.quick() ? new Sizes(40_000, 2, 30_000, 1, 2, 3)
          : new Sizes(266_000, budget.repeats(), 152_000, 3, 8, 8);
    }

    /** Batches in the backlog: one tick every {@link FeedSetup#TICK_EVERY} versions, and one at the end. */
    int batches() {
      return (versions + FeedSetup.TICK_EVERY - 1) / FeedSetup.TICK_EVERY;
    }
  }

  /** Fails loudly when a read did not return exactly the backlog. */
  void expect(String what, long rows) {
    if (rows != sizes.versions()) {
      throw new IllegalStateException(what + " returned " + rows + " rows, " + sizes.versions() + " were written");
    }
  }

  /**
   * A metric with a target on its value and no baseline: the median of the repeats, with their range in the note
   * (the JSON keeps every repeat in {@code runs}, with a null baseline).
   */
  static Metric valueMetric(String name, String unit, List<double[]> runs, Target target, String note) {
    double[] values = runs.stream().mapToDouble(r -> r[0]).toArray();
    double median = Stats.median(values);
    String spread = values.length < 2 ? "; 1 run" : String.format(Locale.ROOT, "; %d repeats, %s-%s (%.0f%% of the"
        + " median)", values.length, Report.num(Stats.min(values)), Report.num(Stats.max(values)),
        100 * (Stats.max(values) - Stats.min(values)) / median);
    return new Metric(name, median, unit, null, null, null, null, List.copyOf(runs), target, note + spread);
  }

  /** A comparison that could not be measured: a null value and the reason. */
  static Metric unavailable(String name, String unit, String reason) {
    return new Metric(name, Double.NaN, unit, null, null, null, null, List.of(), null, "not measured: " + reason);
  }
}
