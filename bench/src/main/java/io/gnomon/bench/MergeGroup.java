package io.gnomon.bench;

import io.gnomon.checker.fuzz.MergeFuzzer;
import io.gnomon.testkit.PgCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The merge group: {@code gnomon.merge} of a branch holding 50,000 updated rows into a 200,000-row main, side by side
 * with a tracked UPDATE of the same rows on main; the same merge while writers update other rows of main; a merge
 * with nothing new; main merged into a branch; a size series that shows how a merge's time grows with its rows; and
 * the merge fuzzer's in-memory rate. Every merge runs under a statement timeout: a merge that does not finish is
 * reported as a lower bound, and the measurements that depend on it are skipped with the reason. See {@link
 * MergeRun} for the database and the keys.
 */
final class MergeGroup {
  /** The fuzzer's fixed seed: every run checks the same cases. */
  static final long FUZZ_SEED = 20_261_130L;

  private MergeGroup() {}

  /**
   * How much the group does.
   *
   * @param repeats pairs of sides, a merge and a tracked UPDATE (each pair on a fresh branch, each side on a fresh
   *     connection that runs its statement twice)
   * @param concurrentRepeats merges with concurrent writers (each on a fresh branch)
   * @param writers concurrent writer connections
   * @param timeoutSeconds the statement timeout of every merge
   * @param fuzzCases cases per fuzzer run
   * @param fuzzRepeats fuzzer runs (after one warm-up run)
   */
  record Sizes(int repeats, int concurrentRepeats, int writers, int timeoutSeconds, long fuzzCases, int fuzzRepeats) {
    static Sizes of(Budget budget) {
      return budget.quick() ? new Sizes(3, 1, 2, 60, 300_000, 1) : new Sizes(5, 2, 2, 120, 1_000_000, 3);
    }
  }

  static List<Metric> run(Budget budget, Path outDir, PrintStream out) {
    Details log = new Details(out);
    Sizes sizes = Sizes.of(budget);
    Machine.describe().forEach(line -> log.log("%s", line));
    try {
      Metric fuzz = fuzz(sizes, log);
      try (PgCluster pg = BenchCluster.start()) {
        MergeRun.load(pg, new Pgbench(pg, BenchCluster.binaries(), outDir.resolve("scripts")), log);
        try (Connection c = pg.connect(MergeRun.DB)) {
          log.log("server: %s; %s", Db.text(c, "select version()"), String.join(", ", Db.lines(c,
              "select name || '=' || current_setting(name) from pg_settings where name in ('fsync',"
                  + " 'synchronous_commit', 'shared_buffers', 'work_mem', 'temp_buffers', 'jit', 'max_wal_size')"
                  + " order by name")));
          List<Metric> rows = measure(new MergeRun(pg, c, log, sizes.timeoutSeconds()), sizes);
          rows.add(rows.size() > 4 ? 4 : rows.size(), fuzz);
          return rows;
        } catch (SQLException e) {
          throw new IllegalStateException(e.getMessage(), e);
        }
      }
    } finally {
      log.writeTo(outDir.resolve("merge.txt"));
    }
  }

  private static List<Metric> measure(MergeRun run, Sizes sizes) {
    Details log = run.log();
    log.log("load average before the merges: %.2f", Machine.load());
    Metric series = sizeSeries(run);

    // A merge of 50,000 updated rows against a tracked UPDATE of the same rows. Each repeat makes a fresh branch with
    // the same 50,000 changes; then each side (alternating which goes first) opens a fresh connection and runs its
    // statement twice, rolled back: the first of its connection, then the same again after it (a warm-up of its own
    // kind). Main keeps its state throughout, so every merge merges the same changes into the same main and every
    // UPDATE updates the same rows. VACUUM and CHECKPOINT (on the group's own connection) before each statement.
    String into = "into_0";
    run.branch(into); // main is merged into it below: it forks before main receives the merge
    List<double[]> time = new ArrayList<>();
    List<double[]> cpu = new ArrayList<>();
    List<double[]> firstTime = new ArrayList<>();
    List<double[]> firstCpu = new ArrayList<>();
    List<double[]> rate = new ArrayList<>();
    List<double[]> nothing = new ArrayList<>();
    List<double[]> intoRate = new ArrayList<>();
    boolean timedOut = false;
    boolean intoTimedOut = false;
    String source = null;
    for (int r = 0; r < sizes.repeats() && !timedOut; r++) {
      source = "src_" + r;
      run.branchWithUpdates(source, MergeRun.MERGED_KEYS);
      MergeRun.Merge[] merges = null;
      double[][] updates = null;
      for (int side : Budget.trackedFirst(r) ? new int[] {0, 1} : new int[] {1, 0}) {
        try (Connection fresh = run.pg().connect(MergeRun.DB)) {
          if (side == 0) {
            merges = new MergeRun.Merge[2];
            for (int k = 0; k < 2 && !timedOut; k++) {
              run.settle();
              merges[k] = expect(run.merge(fresh, source, "main", true), "applied", MergeRun.MERGED);
              timedOut = merges[k].timedOut();
            }
          } else {
            updates = new double[2][];
            for (int k = 0; k < 2; k++) {
              run.settle();
              updates[k] = run.trackedUpdate(fresh, MergeRun.MERGED_KEYS);
            }
          }
        } catch (SQLException e) {
          throw new IllegalStateException(e.getMessage(), e);
        }
      }
      if (timedOut) {
        MergeRun.Merge m = merges[0].timedOut() ? merges[0] : merges[1];
        time.add(new double[] {m.millis(), updates[1][0]});
        cpu.add(new double[] {m.cpuMillis(), updates[1][1]});
        rate.add(new double[] {MergeRun.rowsPerSecond(MergeRun.MERGED, m.millis()), Double.NaN});
        break;
      }
      firstTime.add(new double[] {merges[0].millis(), updates[0][0]});
      firstCpu.add(new double[] {merges[0].cpuMillis(), updates[0][1]});
      time.add(new double[] {merges[1].millis(), updates[1][0]});
      cpu.add(new double[] {merges[1].cpuMillis(), updates[1][1]});
      rate.add(new double[] {MergeRun.rowsPerSecond(MergeRun.MERGED, merges[1].millis()), Double.NaN});
      run.log().log("repeat %d: first of a connection: merge %.0f ms (CPU %.0f ms, %,d faults), UPDATE %.0f ms (CPU"
              + " %.0f ms, %,.0f faults); second: merge %.0f ms (CPU %.0f ms, %,d faults), UPDATE %.0f ms (CPU %.0f ms,"
              + " %,.0f faults)", r, merges[0].millis(), merges[0].cpuMillis(), merges[0].faults(), updates[0][0],
          updates[0][1], updates[0][2], merges[1].millis(), merges[1].cpuMillis(), merges[1].faults(), updates[1][0],
          updates[1][1], updates[1][2]);
    }
    if (!timedOut) {
      run.explainMerge(source, "main", 100);
      // the last branch merged for good: then the same merge again (nothing new), and main into a branch
      run.settle();
      expect(run.merge(source, "main"), "applied", MergeRun.MERGED);
      nothing.add(new double[] {expect(run.merge(source, "main"), "nothing", 0).millis(), Double.NaN});
      run.settle();
      MergeRun.Merge i = expect(run.merge("main", into), "applied", MergeRun.MERGED);
      intoTimedOut = i.timedOut();
      intoRate.add(new double[] {MergeRun.rowsPerSecond(MergeRun.MERGED, i.millis()), Double.NaN});
    }
    double alone = Stats.median(time.stream().mapToDouble(t -> t[0]).toArray());
    String timeout = String.format(Locale.ROOT, "the merge of %,d rows did not finish within the %d s statement"
        + " timeout", MergeRun.MERGED, run.timeoutSeconds());
    String pair = "gnomon.merge(branch, 'main') of a fresh branch with " + String.format(Locale.ROOT, "%,d",
        MergeRun.MERGED) + " rows updated through its view (abalance + 1, keys aid % 4 = 0) against an UPDATE of the"
        + " same rows on main (abalance + 1), each in a transaction rolled back, each side on its own fresh"
        + " connection, the sides alternating; VACUUM and CHECKPOINT before each statement; ";

    List<Metric> rows = new ArrayList<>();
    rows.add(Metric.paired("merge_50k_vs_tracked_update", "ms", time, Target.atMost(2.0),
        (timedOut ? "LOWER BOUND: " + timeout + "; " : "") + pair + "the second statement of each connection (after"
            + " the same statement once, rolled back)"));
    if (!firstTime.isEmpty()) {
      rows.add(Metric.paired("merge_50k_first_of_connection_vs_tracked_update", "ms", firstTime, null, pair
          + "the first statement of each connection"));
    }
    rows.add(FeedRun.valueMetric("merge_50k_rows_per_s", "rows/s", rate, null, (timedOut ? "UPPER BOUND: " + timeout
        + "; " : "") + "rows merged per second of the same merges (an earlier implementation: 105,000 rows/s)"));
    if (timedOut) {
      rows.add(FeedRun.unavailable("merge_with_concurrent_writers_vs_alone", "ms", timeout));
      rows.add(FeedRun.unavailable("merge_writers_tps_during_vs_without", "tps", timeout));
      rows.add(FeedRun.unavailable("merge_nothing_new_ms", "ms", timeout));
      rows.add(FeedRun.unavailable("merge_main_into_branch_50k_rows_per_s", "rows/s", timeout));
    } else {
      rows.addAll(concurrent(run, sizes, alone));
      rows.add(FeedRun.valueMetric("merge_nothing_new_ms", "ms", nothing, null, "the second gnomon.merge of the same"
          + " pair right after the first: status nothing, nothing written"));
      rows.add(FeedRun.valueMetric("merge_main_into_branch_50k_rows_per_s", "rows/s", intoRate, null, (intoTimedOut
          ? "UPPER BOUND: a merge into the branch did not finish within the statement timeout; " : "")
          + "gnomon.merge('main', branch) of the same 50,000 rows into a branch forked before main received them: the merge writes"
          + " the branch's rows and their history set-based"));
    }
    // the evidence behind them
    rows.add(Metric.paired("merge_50k_server_cpu_vs_tracked_update", "ms", cpu, null,
        "backend CPU (utime+stime from /proc/PID/stat) of the same merges and UPDATEs (second of a connection)"));
    if (!firstCpu.isEmpty()) {
      rows.add(Metric.paired("merge_50k_first_of_connection_server_cpu_vs_tracked_update", "ms", firstCpu, null,
          "backend CPU of the first merge and the first UPDATE of a connection"));
    }
    rows.add(series);
    log.log("load average at the end: %.2f", Machine.load());
    return rows;
  }

  /** A merge's outcome as expected (unless it timed out), else the group fails loudly. */
  private static MergeRun.Merge expect(MergeRun.Merge m, String status, long written) {
    if (!m.timedOut() && (!status.equals(m.status()) || m.written() != written || m.conflicts() != 0)) {
      throw new IllegalStateException("expected a merge with status " + status + " writing " + written
          + " rows, got " + m);
    }
    return m;
  }

  /**
   * merge_4k_vs_1k: merges of 1,000, 2,000 and 4,000 updated rows (keys with aid % 4 = 1), to show how a merge's
   * time grows with its rows (linear: 4); the plans of the 2,000-row merge go to the details (a rolled-back run
   * before the measured one).
   */
  private static Metric sizeSeries(MergeRun run) {
    int[] sizes = {1_000, 2_000, 4_000};
    double[] ms = new double[sizes.length];
    boolean timedOut = false;
    for (int i = 0; i < sizes.length; i++) {
      String source = "size_" + sizes[i];
      long n = run.branchWithUpdates(source, "aid % " + (MergeRun.ROWS / sizes[i]) + " = 1");
      run.settle();
      if (i == 1) {
        run.explainMerge(source, "main", 20);
      }
      MergeRun.Merge m = expect(run.merge(source, "main"), "applied", n);
      ms[i] = m.millis();
      timedOut |= m.timedOut();
      run.log().log("size series: %,d rows merged in %.0f ms, %,.0f rows/s", n, m.millis(),
          MergeRun.rowsPerSecond(n, m.millis()));
    }
    return Metric.single("merge_4k_vs_1k", ms[2], "ms", ms[0], null, String.format(Locale.ROOT,
        "%smerges of 4,000 against 1,000 updated rows into main (2,000: %.0f ms); linear growth gives 4",
        timedOut ? "LOWER BOUND: a merge did not finish within the statement timeout; " : "", ms[1]));
  }

  /**
   * merge_with_concurrent_writers_vs_alone and merge_writers_tps_during_vs_without: the same 50,000-row merge while
   * {@link MergeWriters} update other rows of main, against the median merge alone; the writers' commits per second
   * during the merge against a window as long without it, just before or just after (alternating).
   */
  private static List<Metric> concurrent(MergeRun run, Sizes sizes, double aloneMillis) {
    List<double[]> time = new ArrayList<>();
    List<double[]> tps = new ArrayList<>();
    for (int r = 0; r < sizes.concurrentRepeats(); r++) {
      String source = "conc_" + r;
      run.branchWithUpdates(source, MergeRun.MERGED_KEYS);
      run.settle();
      try (MergeWriters writers = new MergeWriters(run.pg(), sizes.writers())) {
        MergeWriters.sleep(2_000); // connections and plans warm up
        long window = (long) Math.min(30_000, Math.max(3_000, aloneMillis));
        double without = Double.NaN;
        if (Budget.trackedFirst(r)) {
          without = writers.tps(window);
        }
        long c0 = writers.commits();
        MergeRun.Merge m = expect(run.merge(source, "main"), "applied", MergeRun.MERGED);
        double during = (writers.commits() - c0) * 1e3 / m.millis();
        if (!Budget.trackedFirst(r)) {
          without = writers.tps(window);
        }
        run.log().log("with %d writers: merge %.0f ms (alone, median: %.0f ms); writers %.0f tps during the merge,"
            + " %.0f tps without", sizes.writers(), m.millis(), aloneMillis, during, without);
        time.add(new double[] {m.millis(), aloneMillis});
        tps.add(new double[] {during, without});
      }
    }
    return List.of(
        Metric.paired("merge_with_concurrent_writers_vs_alone", "ms", time, null, "the same merge while "
            + sizes.writers() + " writers commit single-row UPDATEs of other rows of main (keys aid % 4 = 2, JDBC,"
            + " prepared, autocommit), against the median merge alone of merge_50k_vs_tracked_update"),
        Metric.paired("merge_writers_tps_during_vs_without", "tps", tps, null, "those writers' commits per second"
            + " during the merge, against a window as long without a merge (before or after, alternating)"));
  }

  /**
   * fuzz_cases_per_s: the merge fuzzer in this JVM, one thread, fixed seed and count, every strategy; the rate per
   * second of the thread's CPU time (the rate on one core, whatever else the machine runs), after a warm-up run.
   */
  private static Metric fuzz(Sizes sizes, Details log) {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    PrintStream sink = new PrintStream(text, true, StandardCharsets.UTF_8);
    new MergeFuzzer(Math.min(200_000, sizes.fuzzCases()), FUZZ_SEED, 0, MergeFuzzer.STRATEGIES, null, 3_600_000)
        .run(sink);
    List<double[]> runs = new ArrayList<>();
    double[] wall = new double[sizes.fuzzRepeats()];
    for (int r = 0; r < sizes.fuzzRepeats(); r++) {
      text.reset();
      MergeFuzzer.Report report = new MergeFuzzer(sizes.fuzzCases(), FUZZ_SEED, 0, MergeFuzzer.STRATEGIES, null,
          3_600_000).run(sink);
      if (!report.passed()) {
        throw new IllegalStateException("the merge fuzzer found failures:\n" + text.toString(StandardCharsets.UTF_8));
      }
      runs.add(new double[] {report.casesPerCpuSecond(), Double.NaN});
      wall[r] = report.casesPerSecond();
      log.log("fuzz: %,d cases, %,.0f cases per CPU second, %,.0f per wall-clock second", report.cases(),
          report.casesPerCpuSecond(), report.casesPerSecond());
    }
    log.section("the last fuzzer run's output", text.toString(StandardCharsets.UTF_8));
    return FeedRun.valueMetric("fuzz_cases_per_s", "cases/s", runs, new Target(Target.Kind.AT_LEAST, 200_000, true),
        String.format(Locale.ROOT, "io.gnomon.checker.fuzz.MergeFuzzer in this JVM, one thread, seed %d, %,d cases"
            + " over every strategy, after a warm-up run; per second of the thread's CPU time (per wall-clock second:"
            + " median %,.0f)", FUZZ_SEED, sizes.fuzzCases(), Stats.median(wall)));
  }
}
