package io.gnomon.bench;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Primary-key point reads through the branch view: a branch of main against main's tracked table, and depth four
 * against depth one. Each comparison is a pgbench run (the same script on both sides: only the session's branch and
 * search_path differ, as after {@code gnomon.branch_use}) and a server-side loop, timed by the clock and by the
 * backend's CPU.
 */
final class BranchReads {
  /** The same text on main and on a branch: with the branch schema first in search_path it names the view. */
  static final String SCRIPT = ReadMetrics.CURRENT_SCRIPT;

  private final BranchBench b;
  private final Budget budget;
  private final Details log;

  BranchReads(BranchBench b) {
    this.b = b;
    this.budget = b.budget();
    this.log = b.details();
  }

  /** branch_point_read_vs_main_depth1, and its server-side time and CPU. */
  List<Metric> depth1VsMain() {
    return compare("branch_point_read_vs_main_depth1", "branch_point_read_depth1_vs_main", b.depth1(), null,
        Target.atMost(1.15), "the branch depth1 (1% of its keys written on it)", "main (the tracked table)");
  }

  /** branch_point_read_depth4_vs_depth1, and its server-side time and CPU. */
  List<Metric> depth4VsDepth1() {
    return compare("branch_point_read_depth4_vs_depth1", "branch_point_read_depth4_vs_depth1", b.depth4(),
        b.depth1(), Target.atMost(1.05), "chain4 (depth 4, a quarter of the written keys on each level)",
        "depth1 (the same keys written on one level)");
  }

  /**
   * The same two comparisons with the optional C module's branch read ({@code gnomon.use_c_module(true)}: the branch
   * views read through {@code gnomon.branch_pick_c}), in the same database and run, then the module is disabled again
   * (the SQL read and the PL/pgSQL write triggers for everything measured after). Names end in {@code _c}. Empty, and
   * logged, when the server cannot load the library.
   */
  List<List<Metric>> cPath() {
    Connection c = b.c();
    try {
      Db.exec(c, "select gnomon.use_c_module(true, '" + CWriteMetrics.library().replace("'", "''") + "')");
      if (!"t".equals(Db.text(c, "select gnomon.branch_c_enabled()"))) {
        log.log("the C module %s has no branch read: no _c rows", CWriteMetrics.library());
        Db.exec(c, "select gnomon.use_c_module(false)");
        return List.of();
      }
    } catch (IllegalStateException e) {
      log.log("the C module %s could not be loaded, no _c rows: %s", CWriteMetrics.library(), e.getMessage());
      return List.of();
    }
    try {
      log.log("C branch read enabled (%s)", CWriteMetrics.library());
      List<List<Metric>> out = new ArrayList<>();
      out.add(compare("branch_point_read_vs_main_depth1_c", "branch_point_read_depth1_c_vs_main", b.depth1(), null,
          Target.atMost(1.15), "the branch depth1 read through the C module", "main (the tracked table)"));
      out.add(compare("branch_point_read_depth4_vs_depth1_c", "branch_point_read_depth4_c_vs_depth1", b.depth4(),
          b.depth1(), Target.atMost(1.05), "chain4 read through the C module", "depth1 read through the C module"));
      explain("C read: ");
      return out;
    } finally {
      Db.exec(c, "select gnomon.use_c_module(false)");
    }
  }

  private List<Metric> compare(String name, String serverName, int branch, Integer baseline, Target target,
      String what, String against) {
    List<double[]> pgbenchRuns = Paired.alternate(budget.repeats(), () -> latency(branch),
        () -> latency(baseline));
    // the SQL read costs tens of times a main read: fewer iterations on the branch side keep the loop to seconds,
    // and enough on main's side for the CPU clock's 10 ms ticks; the C read costs about what main's does, so its
    // loops are as long as main's (else they last a few ticks and their CPU reads as nothing)
    int nBranch = name.endsWith("_c") ? budget.serverLoop() : Math.max(budget.serverLoop() / 10, 300);
    int nBase = baseline == null ? budget.serverLoop() : nBranch;
    List<double[]> clock = new ArrayList<>();
    List<double[]> cpu = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      double[] v;
      double[] base;
      if (Budget.trackedFirst(r)) {
        v = loop(branch, nBranch);
        base = loop(baseline, nBase);
      } else {
        base = loop(baseline, nBase);
        v = loop(branch, nBranch);
      }
      clock.add(new double[] {v[0], base[0]});
      cpu.add(new double[] {v[1], base[1]});
      log.log("server point read: %s %.1f us (CPU %.1f us), %s %.1f us (CPU %.1f us)", label(branch), v[0], v[1],
          label(baseline), base[0], base[1]);
    }
    List<Metric> out = new ArrayList<>();
    out.add(Metric.paired(name, "us", pgbenchRuns, target,
        "pgbench -M prepared, 1 client, " + budget.latencySeconds() + " s per run, select abalance by random aid:"
            + " us per transaction = 1e6 / tps, so the ratio is the tps of " + against + " / the tps of " + what));
    out.add(Metric.paired(serverName.replace("_vs_", "_server_us_vs_"), "us", clock, null,
        nBranch + " (" + label(branch) + ") and " + nBase + " (" + label(baseline) + ") point reads in a PL/pgSQL"
            + " loop, clock_timestamp() per read"));
    if (cpu.stream().noneMatch(c -> Double.isNaN(c[0]) || Double.isNaN(c[1]))) {
      out.add(Metric.paired(serverName.replace("_vs_", "_server_cpu_us_vs_"), "us", cpu, null,
          "backend CPU (utime+stime from /proc/PID/stat) per read over the same loops"));
    }
    return out;
  }

  private double latency(Integer branch) {
    Map<String, String> env = branch == null ? Map.of() : BranchBench.on(branch);
    Pgbench.Result r = b.pgbench().script(BranchBench.DB, "branch_point_read", SCRIPT, 1, budget.latencySeconds(),
        Map.of(), env);
    log.log("point read %-10s %7.1f us/transaction (%.0f tps)", label(branch), r.microsPerTransaction(), r.tps());
    return r.microsPerTransaction();
  }

  private double[] loop(Integer branch, int n) {
    return BranchBench.serverLoop(b.c(), "select bench.branch_read_loop(" + branch + ", " + n + ")", n);
  }

  private String label(Integer branch) {
    if (branch == null) {
      return "main";
    }
    return branch == b.depth1() ? "depth1" : branch == b.depth4() ? "depth4" : "branch " + branch;
  }

  /** EXPLAIN (ANALYZE, BUFFERS) of point reads at depth 1 and 4, a key untouched and one written, and on main. */
  void explain() {
    explain("");
  }

  private void explain(String prefix) {
    Connection c = b.c();
    int untouched = 4242;
    int written = 4200;
    String read = "select abalance from " + BranchSql.VIEW + " where aid = ";
    log.section(prefix + "main point read (the tracked table)", plan(c, "select abalance from public.pgbench_accounts"
        + " where aid = " + untouched));
    for (int branch : List.of(b.depth1(), b.depth4())) {
      Db.exec(c, "select set_config('gnomon.branch', '" + branch + "', false)");
      try {
        // a first execution outside the plan: the catalog caches are warm, as in a running application
        Db.exec(c, read + untouched);
        log.section(prefix + label(branch) + " point read, key untouched on the branch (aid " + untouched + ")",
            plan(c, read + untouched));
        log.section(prefix + label(branch) + " point read, key written on the branch (aid " + written + ")",
            plan(c, read + written));
        Db.exec(c, "prepare bench_branch_read(int) as " + read + "$1");
        try {
          Db.exec(c, "set plan_cache_mode = force_generic_plan");
          log.section(prefix + label(branch) + " point read, generic plan (prepared, as pgbench -M prepared runs it after"
              + " five executions), key untouched", String.join("\n", Db.lines(c,
              "explain (analyze, buffers) execute bench_branch_read(" + untouched + ")")));
        } finally {
          Db.exec(c, "reset plan_cache_mode");
          Db.exec(c, "deallocate bench_branch_read");
        }
      } finally {
        Db.exec(c, "select set_config('gnomon.branch', '', false)");
      }
    }
  }

  private static String plan(Connection c, String sql) {
    return String.join("\n", Db.lines(c, "explain (analyze, buffers) " + sql));
  }
}
