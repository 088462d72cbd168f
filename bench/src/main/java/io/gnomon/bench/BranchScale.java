package io.gnomon.bench;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Branches at scale: main's throughput with 100,000 open branches against a copy with none, the catalog's bytes per
 * branch, and a diff whose cost should follow the changes, not the table.
 */
final class BranchScale {
  static final String DIFF_SMALL = "br_diff_200k";
  static final String DIFF_LARGE = "br_diff_2m";
  /** Keys changed on the diff branch. */
  static final int DIFF_CHANGES = 1_000;

  private final PgCluster pg;
  private final Budget budget;
  private final Pgbench pgbench;
  private final Details log;

  BranchScale(PgCluster pg, Budget budget, Pgbench pgbench, Details log) {
    this.pg = pg;
    this.budget = budget;
    this.pgbench = pgbench;
    this.log = log;
  }

  /**
   * Creates 100,000 branches in {@code many} (10,000 with --quick), one gnomon.branch_create per transaction, then
   * compares main's UPDATE and point-read throughput there with {@code none}, a copy of the same database without
   * branches.
   *
   * @return main_tps_100k_branches_vs_none for UPDATE and for point reads, catalog_bytes_per_branch, how the cost
   *     of a create grew along one session, and main's UPDATE and point read in server-side loops (backend CPU)
   */
  List<Metric> mainWithManyBranches(String none, String many) throws SQLException {
    int count = budget.quick() ? 10_000 : 100_000;
    int oneSession = budget.quick() ? 2_000 : 10_000;
    Metric bytes;
    Metric sessionGrowth;
    try (Connection m = pg.connect(many); Connection n = pg.connect(none)) {
      long t0 = System.nanoTime();
      // the first ones in one session, as a long-lived application connection would: its cached plans were made
      // while the catalog was small
      List<Double> first = new ArrayList<>();
      for (int i = 0; i < oneSession / 1_000; i++) {
        first.add(Db.number(m, "call bench.create_loop(1000, 's" + i + "_', true, null)"));
      }
      // the slowest thousand, not the last: an autovacuum ANALYZE of the catalog during the session replans it
      double slowest = first.stream().mapToDouble(Double::doubleValue).max().getAsDouble();
      sessionGrowth = Metric.single("branch_create_one_session_slowest_vs_first_1k", slowest, "us", first.get(0),
          null, String.format(Locale.ROOT, "us per gnomon.branch_create of the slowest 1,000 of %d created in one"
              + " session (from an empty, analyzed catalog) / of the first 1,000; per 1,000: %s", oneSession,
              first.stream().map(x -> String.format(Locale.ROOT, "%.0f", x)).toList()));
      log.log("created %d branches in one session in %.1f s; us per branch, per 1,000: %s", oneSession,
          (System.nanoTime() - t0) / 1e9, first.stream().map(x -> String.format(Locale.ROOT, "%.0f", x)).toList());
      // the rest 1,000 per session, as the sessions of a pool would
      long t1 = System.nanoTime();
      List<String> rates = new ArrayList<>();
      for (int i = oneSession / 1_000; i < count / 1_000; i++) {
        try (Connection s = pg.connect(many)) {
          double us = Db.number(s, "call bench.create_loop(1000, 'k" + i + "_', true, null)");
          if (i % 10 == 9) {
            rates.add(String.format(Locale.ROOT, "%.0f", us));
          }
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      log.log("created %d more branches, 1,000 per session, in %.1f s; us per branch, every 10th session: %s",
          count - oneSession, (System.nanoTime() - t1) / 1e9, String.join(" ", rates));
      long branches = (long) Db.number(m, "select count(*) from gnomon.branch");
      double size = Db.number(m, "select pg_total_relation_size('gnomon.branch')");
      log.log("%d branches in %.1f s, one gnomon.branch_create per transaction", branches, seconds);
      log.section("gnomon.branch with " + branches + " branches", String.join("\n", Db.lines(m,
          "select format('%s: %s bytes', c.relname, pg_relation_size(c.oid)) from pg_class c"
              + " where c.oid = 'gnomon.branch'::regclass or c.oid in (select indexrelid from pg_index"
              + " where indrelid = 'gnomon.branch'::regclass) or c.oid = (select reltoastrelid from pg_class"
              + " where oid = 'gnomon.branch'::regclass) order by 1")));
      bytes = Metric.single("catalog_bytes_per_branch", size / branches, "bytes", null, Target.valueAtMost(600),
          String.format(Locale.ROOT, "pg_total_relation_size('gnomon.branch') (heap, indexes, TOAST) / %d branches"
              + " of main, right after they were created; %.1f MB in all", branches, size / 1e6));
      for (Connection c : List.of(m, n)) {
        Db.exec(c, "vacuum analyze");
      }
      Db.exec(m, "checkpoint");
      List<double[]> update = Paired.alternate(budget.repeats(), () -> update(many, none, many),
          () -> update(none, none, many));
      // the updates left each table's pages with dead versions that the first reads would prune (the first select-only
      // runs were 10-20% slower than the last): vacuumed, and each side read once unmeasured, the reads start even
      for (Connection c : List.of(m, n)) {
        Db.exec(c, "vacuum analyze");
      }
      Db.exec(m, "checkpoint");
      read(many);
      read(none);
      log.log("(the two select-only runs above were warm-ups, not measured)");
      List<double[]> read = Paired.alternate(budget.repeats(), () -> read(many), () -> read(none));
      // the same work inside the server, timed by the backend's CPU: what the client's round trip hides
      List<double[]> updateCpu = new ArrayList<>();
      List<double[]> readCpu = new ArrayList<>();
      int loop = budget.serverLoop();
      for (int r = 0; r < budget.repeats(); r++) {
        double[][] u = new double[2][];
        double[][] q = new double[2][];
        for (int k = 0; k < 2; k++) {
          int side = (r + k) % 2;
          Connection c = side == 0 ? m : n;
          Db.exec(c, "checkpoint");
          u[side] = BranchBench.serverLoop(c, "call bench.branch_update_loop(null, " + loop + ", "
              + (700_000 + r * loop) + ", null)", loop);
          q[side] = BranchBench.serverLoop(c, "select bench.branch_read_loop(null, " + loop + ")", loop);
        }
        log.log("server loops, main: update %.1f us CPU with %d branches, %.1f with none; point read %.1f / %.1f",
            u[0][1], branches, u[1][1], q[0][1], q[1][1]);
        updateCpu.add(new double[] {u[0][1], u[1][1]});
        readCpu.add(new double[] {q[0][1], q[1][1]});
      }
      String note = String.format(Locale.ROOT, "%d open branches (created by gnomon.branch_create in a loop) against a"
          + " copy of the same database with none; pgbench -M prepared, %d s per run, ", branches,
          budget.pgbenchSeconds());
      // the median of the pairs' ratios: each pair's two runs are adjacent, and the machine's speed drifts by more
      // between pairs (session 22: one side's tps moved by a fifth from the first pair to the last) than within one
      Metric updateTps = Metric.pairedRatios("main_tps_100k_branches_vs_none_update", "tps", update,
          Target.atLeast(0.97), note + "1 client, single-row UPDATE of a random aid of main's tracked table, a VACUUM of"
              + " both databases and a checkpoint before each run; the ratio is the median of the pairs' ratios");
      Metric readTps = Metric.pairedRatios("main_tps_100k_branches_vs_none_point_read", "tps", read,
          Target.atLeast(0.97), note + "2 clients, pgbench -S on main's tracked table, after a vacuum and one"
              + " unmeasured run per side; the ratio is the median of the pairs' ratios");
      Metric lower = Metric.lowestRatio(List.of(updateTps, readTps));
      return List.of(
          lower.as("main_tps_100k_branches_vs_none", "the lower of " + updateTps.metric() + " and " + readTps.metric()
              + " (here " + lower.metric() + "): both must be at least 0.97; " + lower.note()),
          updateTps,
          readTps,
          bytes, sessionGrowth,
          Metric.paired("main_update_server_cpu_us_100k_branches_vs_none", "us", updateCpu, null, String.format(
              Locale.ROOT, "backend CPU per committed single-row UPDATE of main's tracked table in a server-side loop"
                  + " of %d, with %d open branches vs none (lower is better)", loop, branches)),
          Metric.paired("main_point_read_server_cpu_us_100k_branches_vs_none", "us", readCpu, null, String.format(
              Locale.ROOT, "backend CPU per point read of main's tracked table in a server-side loop of %d, with %d"
                  + " open branches vs none (lower is better)", loop, branches)));
    }
  }

  /**
   * Main's single-row UPDATE (committed) and point read in {@code many} (100,000 branches) and {@code none}, counted
   * in instructions by callgrind ({@link Callgrind}): the same server loops as above, in single-user backends of the
   * stopped cluster, which it starts again. What the branches cost main's own statements, without the machine's noise
   * that the pgbench and CPU-time pairs carry. No connection may be open.
   *
   * @return main_update_instructions_100k_branches_vs_none and main_point_read_instructions_100k_branches_vs_none, or
   *     the same rows marked not measured, with the reason, where callgrind is unavailable
   */
  List<Metric> mainInstructions(String none, String many) {
    String update = "call bench.branch_update_loop(null, %d, %d, null)";
    String read = "select bench.branch_read_loop(null, %d)";
    String updateName = "main_update_instructions_100k_branches_vs_none";
    String readName = "main_point_read_instructions_100k_branches_vs_none";
    java.util.function.Function<String, List<Metric>> notCounted = why -> {
      log.log("main's instructions not counted: %s", why);
      return List.of(FeedRun.unavailable(updateName, "instructions", why),
          FeedRun.unavailable(readName, "instructions", why));
    };
    Optional<String> why = Callgrind.unavailable(pg);
    if (why.isPresent()) {
      return notCounted.apply(why.get());
    }
    int small = budget.quick() ? 200 : 1_000;
    int large = budget.quick() ? 1_200 : 6_000;
    long t0 = System.nanoTime();
    double[] u = new double[2];
    double[] r = new double[2];
    pg.stop();
    try {
      for (int side = 0; side < 2; side++) {
        String db = side == 0 ? many : none;
        u[side] = Callgrind.perIteration(pg, db, update, small, large, 900_000);
        r[side] = Callgrind.perIteration(pg, db, read, 2 * small, 2 * large, 0);
        log.log("callgrind, main on %-8s: %,.0f instructions per committed UPDATE, %,.0f per point read", db,
            u[side], r[side]);
      }
    } catch (IllegalStateException e) {
      // the group's other rows stand: these two say what went wrong
      return notCounted.apply(e.getMessage());
    } finally {
      pg.start();
    }
    log.log("callgrind of main's loops took %.0f s", (System.nanoTime() - t0) / 1e9);
    String note = "instructions (valgrind callgrind) of a single-user backend, per iteration of the server loop above"
        + " (%s), with 100,000 open branches vs none: runs of %,d and %,d iterations, their difference divided by %,d";
    return List.of(
        Metric.single(updateName, u[0], "instructions", u[1], null, String.format(Locale.ROOT, note,
            "bench.branch_update_loop: a single-row UPDATE of main's tracked table and a COMMIT", small, large,
            large - small)),
        Metric.single(readName, r[0], "instructions", r[1], null, String.format(Locale.ROOT, note,
            "bench.branch_read_loop: a point read of main's tracked table", 2 * small, 2 * large,
            2 * (large - small))));
  }

  /**
   * One pgbench run of main's UPDATE on {@code db}, after a VACUUM of both databases and a checkpoint: the run before
   * left dead versions in its database, whose autovacuum could otherwise run during this one (session 22: the pairs
   * spanned 0.86-1.28 with a checkpoint alone, and 0.64-1.14 in the one run with the VACUUM)
   */
  private double update(String db, String... both) {
    try {
      for (String d : both) {
        try (Connection c = pg.connect(d)) {
          Db.exec(c, "vacuum");
        }
      }
      try (Connection c = pg.connect(db)) {
        Db.exec(c, "checkpoint");
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    Pgbench.Result r = pgbench.script(db, "main_update", WriteMetrics.UPDATE_SCRIPT, 1, budget.pgbenchSeconds(),
        java.util.Map.of(), java.util.Map.of());
    log.log("main update %-8s %8.0f tps", db, r.tps());
    return r.tps();
  }

  private double read(String db) {
    Pgbench.Result r = pgbench.selectOnly(db, 2, budget.pgbenchSeconds(), java.util.Map.of());
    log.log("main select-only %-8s %8.0f tps", db, r.tps());
    return r.tps();
  }

  /**
   * diff_1k_changes_2m_vs_200k_rows: gnomon.diff between main and a branch with 1,000 keys changed on it, on a
   * 2,000,000-row table against a 200,000-row one.
   */
  Metric diff() {
    long t0 = System.nanoTime();
    for (String db : List.of(DIFF_SMALL, DIFF_LARGE)) {
      int scale = DIFF_SMALL.equals(db) ? 2 : 20;
      int rows = scale * 100_000;
      pg.createDatabase(db);
      pgbench.initialize(db, scale);
      Catalog.install(pg.dataSource(db));
      try (Connection c = pg.connect(db)) {
        Db.exec(c, "select gnomon.track('public.pgbench_accounts')");
        int branch = (int) Db.number(c, "select gnomon.branch_create('diff')");
        Db.exec(c, BranchSql.writeOnBranch(branch, rows / DIFF_CHANGES, 0, rows));
        Db.exec(c, "vacuum analyze");
        Db.exec(c, "checkpoint");
      } catch (SQLException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    log.log("diff databases loaded (200,000 and 2,000,000 rows, %d keys changed on branch diff) in %.1f s",
        DIFF_CHANGES, (System.nanoTime() - t0) / 1e9);
    String diff = "select count(*) from gnomon.diff('public.pgbench_accounts', gnomon.point(), gnomon.point('diff'))";
    try (Connection small = pg.connect(DIFF_SMALL); Connection large = pg.connect(DIFF_LARGE)) {
      for (Connection c : List.of(small, large)) {
        long changes = (long) Db.number(c, diff); // warm-up, and a check
        if (changes != DIFF_CHANGES) {
          throw new IllegalStateException("the diff returned " + changes + " keys, expected " + DIFF_CHANGES);
        }
      }
      List<double[]> runs = new ArrayList<>();
      int repeats = budget.quick() ? 3 : 4 * budget.repeats();
      for (int r = 0; r < repeats; r++) {
        double l;
        double s;
        if (Budget.trackedFirst(r)) {
          l = Db.timeMillis(large, diff);
          s = Db.timeMillis(small, diff);
        } else {
          s = Db.timeMillis(small, diff);
          l = Db.timeMillis(large, diff);
        }
        runs.add(new double[] {l, s});
        log.log("diff: 2,000,000 rows %.1f ms, 200,000 rows %.1f ms", l, s);
      }
      String sql = "select * from gnomon.diff('public.pgbench_accounts', gnomon.point(), gnomon.point('diff'))";
      log.section("diff function of 2,000,000 rows: EXPLAIN (ANALYZE, BUFFERS) of its body",
          String.join("\n", Db.lines(large, "explain (analyze, buffers) select * from"
              + " gnomon_t.pgbench_accounts_diff(gnomon.point(), gnomon.point('diff'))")));
      log.section("diff of 2,000,000 rows through gnomon.diff", String.join("\n",
          Db.lines(large, "explain (analyze, buffers) " + sql)));
      return Metric.paired("diff_1k_changes_2m_vs_200k_rows", "ms", runs, Target.atMost(1.2),
          "select count(*) from gnomon.diff(table, main now, branch now) with " + DIFF_CHANGES + " keys changed on the"
              + " branch, 2,000,000 against 200,000 rows; " + repeats + " repeats after one warm-up");
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } finally {
      pg.dropDatabase(DIFF_SMALL);
      pg.dropDatabase(DIFF_LARGE);
    }
  }
}
