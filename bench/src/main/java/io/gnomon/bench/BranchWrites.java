package io.gnomon.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Writes on branches against the same writes on main, and creating a branch against committing an INSERT. Each
 * comparison is a pgbench run and a server-side loop (clock and backend CPU).
 */
final class BranchWrites {
  /** The script creating a branch of main per transaction: random names, so every run creates new ones. */
  static final String CREATE_SCRIPT = "\\set r random(1, 9000000000000000000)\n"
      + "select gnomon.branch_create('p' || :r);\n";
  static final String INSERT_SCRIPT = "\\set r random(1, 9000000000000000000)\n"
      + "insert into bench.insert_commit (name) values ('p' || :r);\n";

  private final BranchBench b;
  private final Budget budget;
  private final Details log;

  BranchWrites(BranchBench b) {
    this.b = b;
    this.budget = b.budget();
    this.log = b.details();
  }

  /**
   * branch_update_vs_main_tracked_update, logged and scratch: single-row UPDATEs of random keys through the branch
   * view against the same UPDATE of main's tracked table. Each repeat runs the three sides in a rotating order.
   *
   * @return the logged and scratch pgbench rows, then per branch kind the server-side clock and CPU rows
   */
  List<Metric> updates() {
    Integer[] sides = {b.logged(), b.scratch(), null};
    List<double[]> logged = new ArrayList<>();
    List<double[]> scratch = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      double[] tps = new double[3];
      for (int k = 0; k < 3; k++) {
        int side = (r + k) % 3;
        tps[side] = update(sides[side]);
      }
      logged.add(new double[] {tps[0], tps[2]});
      scratch.add(new double[] {tps[1], tps[2]});
    }
    int n = Math.max(budget.serverLoop() / 20, 300);
    List<double[]> clockL = new ArrayList<>();
    List<double[]> clockS = new ArrayList<>();
    List<double[]> cpuL = new ArrayList<>();
    List<double[]> cpuS = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      double[][] v = new double[3][];
      for (int k = 0; k < 3; k++) {
        int side = (r + k) % 3;
        Db.exec(b.c(), "checkpoint");
        v[side] = BranchBench.serverLoop(b.c(), "call bench.branch_update_loop(" + sides[side] + ", " + n + ", "
            + (500_000 + r * n) + ", null)", n);
      }
      log.log("server update loop: logged %.1f us (CPU %.1f), scratch %.1f us (CPU %.1f), main %.1f us (CPU %.1f)",
          v[0][0], v[0][1], v[1][0], v[1][1], v[2][0], v[2][1]);
      clockL.add(new double[] {v[0][0], v[2][0]});
      clockS.add(new double[] {v[1][0], v[2][0]});
      cpuL.add(new double[] {v[0][1], v[2][1]});
      cpuS.add(new double[] {v[1][1], v[2][1]});
    }
    String pgbenchNote = "pgbench -M prepared, 1 client, " + budget.pgbenchSeconds() + " s per run, single-row UPDATE"
        + " of a random aid (mostly a key's first write on the branch: copy on write), checkpoint before each run;"
        + " us per transaction = 1e6 / tps, so the ratio is main's tps / the branch's";
    String loopNote = n + " single-row UPDATEs, each committed, in a PL/pgSQL procedure; keys never written on the"
        + " branch before (each a first write)";
    List<Metric> out = new ArrayList<>();
    Metric loggedUpdate = Metric.paired("branch_update_vs_main_tracked_update_logged", "us", logged, null, pgbenchNote);
    out.add(loggedUpdate.as("branch_update_vs_main_tracked_update", "a logged branch (the default kind; "
        + "branch_update_vs_main_tracked_update_scratch is the scratch one): " + pgbenchNote));
    out.add(loggedUpdate);
    out.add(Metric.paired("branch_update_vs_main_tracked_update_scratch", "us", scratch, null, pgbenchNote));
    out.add(Metric.paired("branch_update_server_us_vs_main_logged", "us", clockL, null, loopNote));
    out.add(Metric.paired("branch_update_server_us_vs_main_scratch", "us", clockS, null, loopNote));
    if (cpuL.stream().noneMatch(c -> Double.isNaN(c[0]) || Double.isNaN(c[1]))) {
      out.add(Metric.paired("branch_update_server_cpu_us_vs_main_logged", "us", cpuL, null,
          "backend CPU (utime+stime from /proc/PID/stat) per UPDATE over the same loop"));
      out.add(Metric.paired("branch_update_server_cpu_us_vs_main_scratch", "us", cpuS, null,
          "backend CPU per UPDATE over the same loop"));
    }
    return out;
  }

  private double update(Integer branch) {
    Db.exec(b.c(), "checkpoint");
    Map<String, String> env = branch == null ? Map.of() : BranchBench.on(branch);
    Pgbench.Result r = b.pgbench().script(BranchBench.DB, "branch_update", WriteMetrics.UPDATE_SCRIPT, 1,
        budget.pgbenchSeconds(), Map.of(), env);
    String side = branch == null ? "main" : branch < 0 ? "scratch" : "logged";
    log.log("update %-8s %7.1f us/transaction (%.0f tps)", side, r.microsPerTransaction(), r.tps());
    return r.microsPerTransaction();
  }

  /** branch_create_vs_insert_commit: gnomon.branch_create against a committed single-row INSERT. */
  List<Metric> createVsInsert() {
    return createVsInsert("", "s");
  }

  /**
   * The same with the optional C module enabled ({@code gnomon.branch_create} is then its C function for a branch of
   * main), in the same run; names end in {@code _c}. Empty, and logged, when the module cannot be loaded or has no
   * C create; the module is disabled again afterwards.
   */
  List<Metric> createVsInsertC() {
    try {
      Db.exec(b.c(), "select gnomon.use_c_module(true, '" + CWriteMetrics.library().replace("'", "''") + "')");
    } catch (IllegalStateException e) {
      log.log("the C module %s could not be loaded, no _c create rows: %s", CWriteMetrics.library(), e.getMessage());
      return List.of();
    }
    try {
      if (!"13".equals(Db.text(b.c(), "select prolang::text from pg_proc where oid = "
          + "'gnomon.branch_create(text, text, text, boolean)'::regprocedure"))) {
        log.log("the C module %s has no C branch_create: no _c create rows", CWriteMetrics.library());
        return List.of();
      }
      return createVsInsert("_c", "c");
    } finally {
      Db.exec(b.c(), "select gnomon.use_c_module(false)");
    }
  }

  private List<Metric> createVsInsert(String suffix, String loopPrefix) {
    // The two scripts in one pgbench run of one client, a transaction of either picked at random each time, so both
    // go through the same moments of the machine's load: on a busy machine one client's latency moved by a factor of
    // two between separate runs a few seconds apart (session 15: repeats 0.90-1.17), which no count of alternating
    // 8-second runs averages out. Many short runs; per run and script the mean latency of its fastest 90% of
    // transactions (the slowest tenth are stalls: waits for a core that land on either script at random, and move a
    // plain mean by +-10% at load 5); the row's ratio is the median of the runs' ratios, the spread their range. The
    // plain means' ratios make the _untrimmed row.
    log.log("load before the creates%s: %.2f", suffix, Machine.load());
    List<double[]> runs = new ArrayList<>();
    List<double[]> untrimmed = new ArrayList<>();
    for (int r = 0; r < mixedRuns(); r++) {
      boolean createFirst = Budget.trackedFirst(r);
      Pgbench.Mixed m = b.pgbench().mixed(BranchBench.DB, "create_vs_insert" + suffix,
          createFirst ? List.of(CREATE_SCRIPT, INSERT_SCRIPT) : List.of(INSERT_SCRIPT, CREATE_SCRIPT), mixedSeconds());
      int ci = createFirst ? 0 : 1;
      double create = m.trimmedMeanMicros(ci, KEEP);
      double insert = m.trimmedMeanMicros(1 - ci, KEEP);
      log.log("create vs insert, one run of %d s: branch_create %.2f us (fastest 90%%; mean %.1f, median %.0f, %d"
          + " transactions), insert %.2f us (mean %.1f, median %.0f, %d): %.3f (means: %.3f)", mixedSeconds(), create,
          m.meanMicros(ci), m.medianMicros(ci), m.latencies().get(ci).length, insert, m.meanMicros(1 - ci),
          m.medianMicros(1 - ci), m.latencies().get(1 - ci).length, create / insert,
          m.meanMicros(ci) / m.meanMicros(1 - ci));
      runs.add(new double[] {create, insert});
      untrimmed.add(new double[] {m.meanMicros(ci), m.meanMicros(1 - ci)});
    }
    log.log("create vs insert%s: %d of %d runs' ratios under 1.0", suffix,
        runs.stream().filter(p -> p[0] < p[1]).count(), runs.size());
    // As many creates as INSERTs, enough for the CPU clock's 10 ms ticks: a loop of 2,000 creates (a 25th, as until
    // session 15) lasted four ticks, and the per-loop set-up weighed on its side only
    int n = budget.serverLoop();
    int nInsert = n;
    List<double[]> clock = new ArrayList<>();
    List<double[]> cpu = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      String prefix = "'" + loopPrefix + r + "_'";
      double[] v;
      double[] base;
      if (Budget.trackedFirst(r)) {
        v = createLoop(n, prefix, true);
        base = createLoop(nInsert, prefix, false);
      } else {
        base = createLoop(nInsert, prefix, false);
        v = createLoop(n, prefix, true);
      }
      log.log("server create loop: branch_create %.1f us (CPU %.1f), insert %.1f us (CPU %.1f)", v[0], v[1], base[0],
          base[1]);
      clock.add(new double[] {v[0], base[0]});
      cpu.add(new double[] {v[1], base[1]});
    }
    List<Metric> out = new ArrayList<>();
    out.add(Metric.pairedRatios("branch_create_vs_insert_commit" + suffix, "us", runs, Target.atMost(1.0),
        "pgbench -M prepared, 1 client: select gnomon.branch_create(name) against insert into a table with an"
            + " identity key and a unique name (a row like a branch's), each its own transaction, both scripts in one"
            + " run (pgbench picks one at random per transaction), " + mixedRuns() + " runs of " + mixedSeconds()
            + " s; us = a script's mean latency over its fastest 90% of transactions in a run (pgbench's transaction"
            + " log), ratio = the median of the runs' ratios, spread their range; the plain means in the _untrimmed"
            + " row, the server loops' clock and CPU rows beside it"));
    out.add(Metric.pairedRatios("branch_create_vs_insert_commit" + suffix + "_untrimmed", "us", untrimmed, null,
        "the same runs, every transaction: a script's plain mean latency (1e6 / its tps), median of the runs' ratios"));
    out.add(Metric.paired("branch_create_server_us_vs_insert_commit" + suffix, "us", clock, null,
        n + " branch_create and " + nInsert + " INSERTs in a PL/pgSQL procedure, each committed"));
    if (cpu.stream().noneMatch(c -> Double.isNaN(c[0]) || Double.isNaN(c[1]))) {
      out.add(Metric.paired("branch_create_server_cpu_us_vs_insert_commit" + suffix, "us", cpu, null,
          "backend CPU per create or insert over the same loops"));
    }
    return out;
  }

  /** The share of each script's transactions, the fastest, that a run's figure averages. */
  private static final double KEEP = 0.9;

  /** Mixed create-and-insert runs per row: many short ones (20 of 4 s; quick: 6 of 2 s). */
  private int mixedRuns() {
    return budget.quick() ? 6 : 20;
  }

  private int mixedSeconds() {
    return budget.quick() ? 2 : 4;
  }

  private double[] createLoop(int n, String prefix, boolean branches) {
    return BranchBench.serverLoop(b.c(), "call bench.create_loop(" + n + ", " + prefix + ", " + branches + ", null)",
        n);
  }
}
