package io.gnomon.bench;

import static io.gnomon.bench.WriteRead.ROWS;
import static io.gnomon.bench.WriteRead.TRACKED;
import static io.gnomon.bench.WriteRead.UNTRACKED;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The read path: live point reads, coordinate capture, as-of point reads and scans. */
final class ReadMetrics {
  static final String AS_OF_SCRIPT =
      "\\set aid random(1, " + ROWS + ")\n"
          + "select abalance from gnomon_t.pgbench_accounts_as_of(:coord) where aid = :aid;\n";
  static final String CURRENT_SCRIPT =
      "\\set aid random(1, " + ROWS + ")\n"
          + "select abalance from pgbench_accounts where aid = :aid;\n";
  static final List<String> PLAN_MODES = List.of("auto", "force_custom_plan", "force_generic_plan");

  private final WriteRead wr;
  private final Budget budget;
  private final Details log;

  ReadMetrics(WriteRead wr) {
    this.wr = wr;
    this.budget = wr.budget();
    this.log = wr.details();
  }

  /** point_read_tracked_vs_untracked: pgbench's built-in select-only script, 2 clients. */
  Metric pointRead() {
    List<double[]> runs = Paired.alternate(budget.repeats(), () -> selectOnly(TRACKED), () -> selectOnly(UNTRACKED));
    return Metric.paired("point_read_tracked_vs_untracked", "tps", runs, Target.noSlower(0.03),
        "pgbench -S -M prepared, 2 clients, " + budget.pgbenchSeconds() + " s per run");
  }

  private double selectOnly(String db) {
    Pgbench.Result r = wr.pgbench().selectOnly(db, 2, budget.pgbenchSeconds(), Map.of());
    log.log("select-only %-12s %9.0f tps", db, r.tps());
    return r.tps();
  }

  /** coordinate_vs_select1: latency of {@code select gnomon.coordinate()} against {@code select 1}. */
  Metric coordinate() {
    List<double[]> runs = Paired.alternate(budget.repeats(),
        () -> latency("coordinate", "select gnomon.coordinate();\n", Map.of(), Map.of()),
        () -> latency("select1", "select 1;\n", Map.of(), Map.of()));
    return Metric.paired("coordinate_vs_select1", "us", runs, Target.atMost(1.1),
        "pgbench -M prepared, 1 client, " + budget.latencySeconds() + " s per run; us per round trip = 1e6 / tps");
  }

  private double latency(String name, String script, Map<String, String> defines, Map<String, String> env) {
    Pgbench.Result r = wr.pgbench().script(TRACKED, name, script, 1, budget.latencySeconds(), defines, env);
    log.log("%-34s %7.1f us/transaction %s", name, r.microsPerTransaction(), env.getOrDefault("PGOPTIONS", ""));
    return r.microsPerTransaction();
  }

  /**
   * past_point_read_vs_current: pgbench point reads as of a coordinate captured before (the table
   * unchanged since) against the same read of the live table, single client, for each
   * plan_cache_mode; then the same reads in a server-side loop, and the plans.
   */
  List<Metric> pastPointRead() {
    Connection c = wr.tracked();
    Db.exec(c, "vacuum analyze pgbench_accounts");
    String coord = Db.text(c, "select gnomon.coordinate()");
    log.log("as-of point reads at coordinate %s", coord);
    List<Metric> out = new ArrayList<>();
    for (String mode : PLAN_MODES) {
      Map<String, String> env = Map.of("PGOPTIONS", "-c plan_cache_mode=" + mode);
      int repeats = "auto".equals(mode) ? budget.repeats() : Math.min(budget.repeats(), 3);
      List<double[]> runs = Paired.alternate(repeats,
          () -> latency("as_of_point_read", AS_OF_SCRIPT, Map.of("coord", coord), env),
          () -> latency("current_point_read", CURRENT_SCRIPT, Map.of(), env));
      String name = "auto".equals(mode) ? "past_point_read_vs_current" : "past_point_read_vs_current_" + mode;
      out.add(Metric.paired(name, "us", runs, "auto".equals(mode) ? Target.atMost(1.10) : null,
          "pgbench -M prepared, 1 client, plan_cache_mode=" + mode + ", " + budget.latencySeconds()
              + " s per run; coordinate captured before, table unchanged since"));
    }
    for (String mode : PLAN_MODES) {
      // a custom plan costs about a millisecond to make: fewer iterations keep that loop to seconds
      int n = "force_custom_plan".equals(mode) ? Math.max(budget.serverLoop() / 20, 500) : budget.serverLoop();
      List<double[]> runs = Paired.alternate(budget.repeats(),
          () -> Db.number(c, "select bench.read_loop(" + Db.literal(coord) + ", " + n + ", '" + mode + "', true)"),
          () -> Db.number(c, "select bench.read_loop(" + Db.literal(coord) + ", " + n + ", '" + mode + "', false)"));
      out.add(Metric.paired("past_point_read_server_us_" + mode, "us", runs, null,
          n + " point reads in a PL/pgSQL loop (static SQL, plan cached by the loop), plan_cache_mode=" + mode));
      log.log("server-side point read, %s: as of %.1f us, current %.1f us", mode,
          Stats.median(runs.stream().mapToDouble(r -> r[0]).toArray()),
          Stats.median(runs.stream().mapToDouble(r -> r[1]).toArray()));
    }
    explainPointRead(c, coord);
    return out;
  }

  /**
   * The optional C module's read path beside the SQL path, on the same database and coordinate: the SQL path's
   * generated read is kept as {@code bench.as_of_sql}, then {@code gnomon.use_c_module(true)} regenerates
   * {@code gnomon_t.pgbench_accounts_as_of} on the C path (and the write triggers, which the reads do not use); every
   * pair alternates; {@code use_c_module(false)} puts the SQL path back for the groups after this one.
   * past_point_read_c_vs_current (pgbench, auto plans), past_point_read_c_vs_sql (pgbench, the two as-of reads), and
   * in a PL/pgSQL loop with a generic plan the clock and the backend's CPU per read, C path against SQL path and
   * against the live read.
   */
  List<Metric> pastPointReadC() {
    Connection c = wr.tracked();
    String coord = Db.text(c, "select gnomon.coordinate()");
    Db.exec(c, "create or replace function bench.as_of_sql(coordinate text) returns setof public.pgbench_accounts"
        + " language sql stable as " + Db.literal(Db.text(c,
            "select prosrc from pg_proc where oid = 'gnomon_t.pgbench_accounts_as_of(text)'::regprocedure")));
    Db.exec(c, ServerSql.readLoop(ROWS, "bench.read_loop_sql", "bench.as_of_sql"));
    Db.exec(c, "select gnomon.use_c_module(true, " + Db.literal(CWriteMetrics.library()) + ")");
    // the C path's read before the point read (session 12): its two arms, kept as bench.as_of_c_two_arms
    String cBody = Db.text(c, "select prosrc from pg_proc where oid = 'gnomon_t.pgbench_accounts_as_of(text)'::regprocedure");
    boolean onePointArm = cBody.contains("as_of_key_c");
    if (onePointArm) {
      String twoArms = cBody.substring(cBody.indexOf("union all") + "union all".length())
          .replaceAll("gnomon\\.as_of_keyed_c\\(false, [a-z]\\.aid\\) and ", "");
      Db.exec(c, "create or replace function bench.as_of_c_two_arms(coordinate text) returns setof public.pgbench_accounts"
          + " language sql stable as " + Db.literal(twoArms));
      Db.exec(c, ServerSql.readLoop(ROWS, "bench.read_loop_c_two_arms", "bench.as_of_c_two_arms"));
    }
    List<Metric> out = new ArrayList<>();
    try {
      Db.exec(c, "vacuum analyze pgbench_accounts");
      log.log("as-of point reads on the C path at coordinate %s", coord);
      String sqlScript = AS_OF_SCRIPT.replace("gnomon_t.pgbench_accounts_as_of", "bench.as_of_sql");
      Map<String, String> env = Map.of("PGOPTIONS", "-c plan_cache_mode=auto");
      out.add(Metric.paired("past_point_read_c_vs_current", "us", Paired.alternate(budget.repeats(),
              () -> latency("as_of_point_read_c", AS_OF_SCRIPT, Map.of("coord", coord), env),
              () -> latency("current_point_read", CURRENT_SCRIPT, Map.of(), env)), Target.atMost(1.10),
          "the C module's read path (gnomon.use_c_module(true)): pgbench -M prepared, 1 client, plan_cache_mode=auto, "
              + budget.latencySeconds() + " s per run; coordinate captured before, table unchanged since"));
      out.add(Metric.paired("past_point_read_c_vs_sql", "us", Paired.alternate(budget.repeats(),
              () -> latency("as_of_point_read_c", AS_OF_SCRIPT, Map.of("coord", coord), env),
              () -> latency("as_of_point_read_sql", sqlScript, Map.of("coord", coord), env)), null,
          "the C path's as-of read against the SQL path's (the same generated SQL as past_point_read_vs_current), same"
              + " database and coordinate, pgbench -M prepared, 1 client, plan_cache_mode=auto"));
      if (onePointArm) {
        String twoScript = AS_OF_SCRIPT.replace("gnomon_t.pgbench_accounts_as_of", "bench.as_of_c_two_arms");
        out.add(Metric.paired("past_point_read_c_vs_c_two_arms", "us", Paired.alternate(budget.repeats(),
                () -> latency("as_of_point_read_c", AS_OF_SCRIPT, Map.of("coord", coord), env),
                () -> latency("as_of_point_read_c_two_arms", twoScript, Map.of("coord", coord), env)), null,
            "the C path's point read (one arm, gnomon.as_of_key_c) against its two-arm read before (session 11), same"
                + " database and coordinate, pgbench -M prepared, 1 client, plan_cache_mode=auto"));
      }
      int n = budget.serverLoop();
      String mode = "force_generic_plan";
      List<double[]> clockSql = new ArrayList<>();
      List<double[]> cpuSql = new ArrayList<>();
      List<double[]> clockLive = new ArrayList<>();
      List<double[]> cpuLive = new ArrayList<>();
      List<double[]> clockTwo = new ArrayList<>();
      List<double[]> cpuTwo = new ArrayList<>();
      for (int r = 0; r < budget.repeats(); r++) {
        double[] cp;
        double[] sp;
        double[] live;
        String lit = Db.literal(coord);
        if (Budget.trackedFirst(r)) {
          cp = BranchBench.serverLoop(c, "select bench.read_loop(" + lit + ", " + n + ", '" + mode + "', true)", n);
          sp = BranchBench.serverLoop(c, "select bench.read_loop_sql(" + lit + ", " + n + ", '" + mode + "', true)", n);
          live = BranchBench.serverLoop(c, "select bench.read_loop(" + lit + ", " + n + ", '" + mode + "', false)", n);
        } else {
          live = BranchBench.serverLoop(c, "select bench.read_loop(" + lit + ", " + n + ", '" + mode + "', false)", n);
          sp = BranchBench.serverLoop(c, "select bench.read_loop_sql(" + lit + ", " + n + ", '" + mode + "', true)", n);
          cp = BranchBench.serverLoop(c, "select bench.read_loop(" + lit + ", " + n + ", '" + mode + "', true)", n);
        }
        if (onePointArm) {
          double[] two = BranchBench.serverLoop(c,
              "select bench.read_loop_c_two_arms(" + lit + ", " + n + ", '" + mode + "', true)", n);
          clockTwo.add(new double[] {cp[0], two[0]});
          cpuTwo.add(new double[] {cp[1], two[1]});
          log.log("server-side point read, generic plan: C path before (two arms) %.1f us (CPU %.1f us)", two[0], two[1]);
        }
        clockSql.add(new double[] {cp[0], sp[0]});
        cpuSql.add(new double[] {cp[1], sp[1]});
        clockLive.add(new double[] {cp[0], live[0]});
        cpuLive.add(new double[] {cp[1], live[1]});
        log.log("server-side point read, generic plan: C path %.1f us (CPU %.1f us), SQL path %.1f us (CPU %.1f us),"
            + " live %.1f us (CPU %.1f us)", cp[0], cp[1], sp[0], sp[1], live[0], live[1]);
      }
      String loop = n + " point reads in a PL/pgSQL loop, plan_cache_mode=" + mode;
      out.add(Metric.paired("past_point_read_c_server_us_vs_sql", "us", clockSql, null, loop + ", clock per read"));
      out.add(Metric.paired("past_point_read_c_server_us_vs_current", "us", clockLive, null, loop + ", clock per read"));
      if (cpuSql.stream().flatMapToDouble(java.util.Arrays::stream).noneMatch(Double::isNaN)) {
        out.add(Metric.paired("past_point_read_c_server_cpu_us_vs_sql", "us", cpuSql, null,
            loop + ", backend CPU (utime+stime from /proc/PID/stat) per read"));
        out.add(Metric.paired("past_point_read_c_server_cpu_us_vs_current", "us", cpuLive, null,
            loop + ", backend CPU (utime+stime from /proc/PID/stat) per read"));
      }
      if (onePointArm) {
        out.add(Metric.paired("past_point_read_c_server_us_vs_c_two_arms", "us", clockTwo, null, loop + ", clock per read"));
        if (cpuTwo.stream().flatMapToDouble(java.util.Arrays::stream).noneMatch(Double::isNaN)) {
          out.add(Metric.paired("past_point_read_c_server_cpu_us_vs_c_two_arms", "us", cpuTwo, null,
              loop + ", backend CPU (utime+stime from /proc/PID/stat) per read"));
        }
      }
      explainGeneric(c, coord, "as-of point read on the C path");
    } finally {
      Db.exec(c, "select gnomon.use_c_module(false)");
    }
    return out;
  }

  private void explainPointRead(Connection c, String coord) {
    String asOf = "select abalance from gnomon_t.pgbench_accounts_as_of(" + Db.literal(coord) + ") where aid = 4242";
    log.section("as-of point read, custom plan (literal coordinate)",
        String.join("\n", Db.lines(c, "explain (analyze, buffers) " + asOf)));
    log.section("current point read",
        String.join("\n", Db.lines(c, "explain (analyze, buffers) select abalance from pgbench_accounts where aid = 4242")));
    explainGeneric(c, coord, "as-of point read");
  }

  /** The prepared as-of point read's generic plan, run once and logged under the title. */
  private void explainGeneric(Connection c, String coord, String title) {
    Db.exec(c, "prepare bench_asof(text, int) as select abalance from gnomon_t.pgbench_accounts_as_of($1) where aid = $2");
    try {
      Db.exec(c, "set plan_cache_mode = force_generic_plan");
      log.section(title + ", generic plan (prepared, plan_cache_mode=force_generic_plan)",
          String.join("\n", Db.lines(c, "explain (analyze, buffers) execute bench_asof(" + Db.literal(coord) + ", 4242)")));
    } finally {
      Db.exec(c, "reset plan_cache_mode");
      Db.exec(c, "deallocate bench_asof");
    }
  }

  /**
   * past_scan_10pct_changed_vs_now: count(*) as of a coordinate taken before 10% of the rows
   * changed, against count(*) as of now; and as of now against the live table.
   */
  List<Metric> pastScan() {
    Connection c = wr.tracked();
    Db.exec(c, "vacuum analyze pgbench_accounts");
    // with the default jit=on, a plan that crosses jit_above_cost spends a few hundred milliseconds compiling on
    // this machine; which scan crosses it depends on cost estimates, not on the work: time the scans without JIT
    log.section("live count(*) with the default jit=on",
        String.join("\n", Db.lines(c, "explain (analyze, buffers) select count(*) from pgbench_accounts")));
    Db.exec(c, "set jit = off");
    String before = Db.text(c, "select gnomon.coordinate()");
    Db.exec(c, "update pgbench_accounts set abalance = abalance + 1 where aid % 10 = 0");
    Db.exec(c, "vacuum analyze pgbench_accounts");
    String past = "select count(*) from gnomon_t.pgbench_accounts_as_of(" + Db.literal(before) + ")";
    List<double[]> vsNow = new ArrayList<>();
    List<double[]> nowVsLive = new ArrayList<>();
    for (int r = 0; r < budget.scanRepeats(); r++) {
      String now = "select count(*) from gnomon_t.pgbench_accounts_as_of(" + Db.literal(Db.text(c,
          "select gnomon.coordinate()")) + ")";
      double p;
      double q;
      double live;
      if (Budget.trackedFirst(r)) {
        p = Db.timeMillis(c, past);
        q = Db.timeMillis(c, now);
        live = Db.timeMillis(c, "select count(*) from pgbench_accounts");
      } else {
        live = Db.timeMillis(c, "select count(*) from pgbench_accounts");
        q = Db.timeMillis(c, now);
        p = Db.timeMillis(c, past);
      }
      vsNow.add(new double[] {p, q});
      nowVsLive.add(new double[] {q, live});
      log.log("scan: as of before the 10%% change %.1f ms, as of now %.1f ms, live %.1f ms", p, q, live);
    }
    long changed = (long) Db.number(c, "select count(*) from pgbench_accounts where aid % 10 = 0");
    log.section("as-of scan, 10% changed since the coordinate (" + changed + " rows), jit=off",
        String.join("\n", Db.lines(c, "explain (analyze, buffers) " + past)));
    log.section("live count(*), jit=off",
        String.join("\n", Db.lines(c, "explain (analyze, buffers) select count(*) from pgbench_accounts")));
    Db.exec(c, "reset jit");
    return List.of(
        Metric.paired("past_scan_10pct_changed_vs_now", "ms", vsNow, Target.atMost(5.0),
            "select count(*) as of a coordinate before " + changed + " of " + ROWS
                + " rows changed, against as of now; " + budget.scanRepeats() + " repeats, jit=off"),
        Metric.paired("scan_as_of_now_vs_live", "ms", nowVsLive, null,
            "select count(*) as of now, against the live table, jit=off"));
  }

  /** bytes_per_version: history heap + indexes over its versions; baseline: a freshly loaded row. */
  Metric bytesPerVersion(double freshBytesPerRow) {
    return bytesPerVersion(wr.tracked(), "bytes_per_version", freshBytesPerRow);
  }

  /** The same, for the history of the database c is connected to, reported as the metric name. */
  Metric bytesPerVersion(Connection c, String name, double freshBytesPerRow) {
    Db.exec(c, "vacuum analyze gnomon_t.pgbench_accounts_h");
    String leaves = "from pg_partition_tree('gnomon_t.pgbench_accounts_h') p where p.isleaf";
    double total = Db.number(c, "select coalesce(sum(pg_total_relation_size(p.relid)), 0) " + leaves);
    double heap = Db.number(c, "select coalesce(sum(pg_table_size(p.relid)), 0) " + leaves);
    double indexes = Db.number(c, "select coalesce(sum(pg_indexes_size(p.relid)), 0) " + leaves);
    double versions = Db.number(c, "select count(*) from gnomon_t.pgbench_accounts_h");
    log.log("history of %s: %.0f versions, %.1f MB heap, %.1f MB indexes: %.1f B heap + %.1f B indexes per version",
        name, versions, heap / 1e6, indexes / 1e6, heap / versions, indexes / versions);
    log.section("history indexes", String.join("\n", Db.lines(c,
        "select format('%s: %s', i.indexrelid::regclass, pg_get_indexdef(i.indexrelid)) from pg_index i"
            + " join pg_partition_tree('gnomon_t.pgbench_accounts_h') p on p.relid = i.indrelid"
            + " where p.isleaf order by 1")));
    return Metric.single(name, total / versions, "bytes", freshBytesPerRow, Target.valueAtMost(140),
        String.format(java.util.Locale.ROOT,
            "pg_total_relation_size over the history partitions / %.0f versions (%.0f B heap + %.0f B indexes);"
                + " baseline: pg_total_relation_size(pgbench_accounts) / rows right after pgbench -i",
            versions, heap / versions, indexes / versions));
  }
}
