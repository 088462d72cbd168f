package io.gnomon.bench;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;

/**
 * track_2m_vs_200k_rows: the time of {@code gnomon.track} on a 2,000,000-row table against a
 * 200,000-row one (both {@code pgbench_accounts}, in databases of their own). Tracking should be
 * O(1) in the table's size.
 */
final class TrackMetrics {
  static final String SMALL = "track_200k";
  static final String LARGE = "track_2m";

  private TrackMetrics() {}

  static Metric run(PgCluster pg, Pgbench pgbench, Budget budget, Details log) {
    for (String db : List.of(SMALL, LARGE)) {
      pg.createDatabase(db);
      long t0 = System.nanoTime();
      pgbench.initialize(db, SMALL.equals(db) ? 2 : 20);
      Catalog.install(pg.dataSource(db));
      log.log("%s loaded and catalog installed in %.1f s", db, (System.nanoTime() - t0) / 1e9);
    }
    try (Connection small = pg.connect(SMALL); Connection large = pg.connect(LARGE)) {
      for (Connection c : List.of(small, large)) {
        Db.exec(c, "vacuum analyze");
        Db.exec(c, "checkpoint");
        // a first round outside the measurement: catalog caches and the installer's plans warm up
        track(c);
        Db.exec(c, "select gnomon.untrack('public.pgbench_accounts', true)");
      }
      List<double[]> runs = new ArrayList<>();
      // a track takes tens of milliseconds: many short repeats, so that a burst of other work on the machine moves
      // the median little
      int repeats = budget.quick() ? 3 : 4 * budget.repeats();
      for (int r = 0; r < repeats; r++) {
        double l;
        double s;
        if (Budget.trackedFirst(r)) {
          l = track(large);
          s = track(small);
        } else {
          s = track(small);
          l = track(large);
        }
        runs.add(new double[] {l, s});
        log.log("track: 2,000,000 rows %.1f ms, 200,000 rows %.1f ms", l, s);
        Db.exec(large, "select gnomon.untrack('public.pgbench_accounts', true)");
        Db.exec(small, "select gnomon.untrack('public.pgbench_accounts', true)");
      }
      return Metric.paired("track_2m_vs_200k_rows", "ms", runs, Target.atMost(1.2),
          "select gnomon.track('public.pgbench_accounts') on 2,000,000 against 200,000 rows, then untrack with"
              + " drop_history; " + repeats + " repeats after one warm-up round");
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } finally {
      pg.dropDatabase(SMALL);
      pg.dropDatabase(LARGE);
    }
  }

  private static double track(Connection c) {
    return Db.timeMillis(c, "select gnomon.track('public.pgbench_accounts')");
  }
}
