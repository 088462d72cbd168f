package io.gnomon.bench;

import static io.gnomon.bench.WriteRead.ROWS;
import static io.gnomon.bench.WriteRead.TRACKED;
import static io.gnomon.bench.WriteRead.UNTRACKED;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The optional C write path (gnomon-c): a third copy of {@code pgbench_accounts}, tracked with {@code
 * gnomon.use_c_module(true)}, measured three ways side by side in one run: tracked through the C trigger,
 * tracked through the PL/pgSQL trigger, and untracked. Each repeat rotates which side goes first.
 */
final class CWriteMetrics {
  /** The database tracked through the C trigger. */
  static final String TRACKED_C = "wr_tracked_c";

  private static final String[] SIDES = {TRACKED_C, TRACKED, UNTRACKED};

  private final WriteRead wr;
  private final Connection trackedC;
  private final Budget budget;
  private final Details log;

  CWriteMetrics(WriteRead wr, Connection trackedC) {
    this.wr = wr;
    this.trackedC = trackedC;
    this.budget = wr.budget();
    this.log = wr.details();
  }

  /** The library gnomon.use_c_module loads: -Dgnomon.c.library (bench/run.sh builds it), else $libdir/gnomon. */
  static String library() {
    return System.getProperty("gnomon.c.library", "gnomon");
  }

  private Connection connection(String db) {
    return TRACKED_C.equals(db) ? trackedC : wr.connection(db);
  }

  /** The sides in the order repeat r measures them. */
  private static String[] order(int r) {
    String[] o = new String[SIDES.length];
    for (int i = 0; i < SIDES.length; i++) {
      o[i] = SIDES[(i + r) % SIDES.length];
    }
    return o;
  }

  private static int side(String db) {
    return TRACKED_C.equals(db) ? 0 : TRACKED.equals(db) ? 1 : 2;
  }

  /** Per repeat [C, PL/pgSQL, untracked], as two paired lists: C vs untracked and C vs PL/pgSQL. */
  private static List<Metric> twoWays(String name, String unit, List<double[]> runs, Target target, String note) {
    List<double[]> vsUntracked = new ArrayList<>();
    List<double[]> vsPlpgsql = new ArrayList<>();
    List<double[]> plVsUntracked = new ArrayList<>();
    for (double[] r : runs) {
      vsUntracked.add(new double[] {r[0], r[2]});
      vsPlpgsql.add(new double[] {r[0], r[1]});
      plVsUntracked.add(new double[] {r[1], r[2]});
    }
    return List.of(
        Metric.paired(name + "_tracked_c_vs_untracked", unit, vsUntracked, target, note + "; C trigger vs untracked"),
        Metric.paired(name + "_tracked_plpgsql_vs_untracked_3way", unit, plVsUntracked, null,
            note + "; PL/pgSQL trigger vs untracked, in the same three-way repeats"),
        Metric.paired(name + "_tracked_c_vs_tracked_plpgsql", unit, vsPlpgsql, null,
            note + "; C trigger vs PL/pgSQL trigger, same repeats"));
  }

  /** update_Nc_tracked_c_vs_untracked: pgbench single-row UPDATE tps with N clients, three ways. */
  List<Metric> updateTps(int clients) {
    List<double[]> runs = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      double[] v = new double[3];
      for (String db : order(r)) {
        wr.checkpoint();
        Pgbench.Result res = wr.pgbench().script(db, "update", WriteMetrics.UPDATE_SCRIPT, clients,
            budget.pgbenchSeconds(), Map.of(), Map.of());
        v[side(db)] = res.tps();
        log.log("update %dc %-13s %9.0f tps", clients, db, v[side(db)]);
      }
      runs.add(v);
    }
    return twoWays("update_" + clients + "c", "tps", runs, Target.atLeast(0.80),
        "pgbench -M prepared, " + clients + " client(s), " + budget.pgbenchSeconds()
            + " s per run, single-row UPDATE of a random aid; checkpoint before each run");
  }

  /** update_server_us / update_server_cpu_us, three ways: the committed single-row UPDATE loop in the server. */
  List<Metric> serverTime() {
    int n = budget.serverLoop();
    // the C side's connection is new: warm every side's session (plans, relcache, the trigger's table cache) first
    for (String db : SIDES) {
      Db.exec(connection(db), "call bench.update_loop(" + Math.max(200, n / 10) + ", 900000, null)");
    }
    List<double[]> clock = new ArrayList<>();
    List<double[]> cpu = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      int first = 500_000 + r * n;
      double[] t = new double[3];
      double[] c = new double[3];
      for (String db : order(r)) {
        Connection conn = connection(db);
        wr.checkpoint();
        BackendCpu backend = new BackendCpu(conn);
        OptionalLong cpu0 = backend.micros();
        t[side(db)] = Db.number(conn, "call bench.update_loop(" + n + ", " + first + ", null)");
        OptionalLong cpu1 = backend.micros();
        c[side(db)] = cpu0.isPresent() && cpu1.isPresent() ? (cpu1.getAsLong() - cpu0.getAsLong()) / (double) n
            : Double.NaN;
        log.log("server update loop %-13s %7.1f us/update (clock), %7.1f us CPU", db, t[side(db)], c[side(db)]);
      }
      clock.add(t);
      cpu.add(c);
    }
    List<Metric> out = new ArrayList<>(twoWays("update_server_us", "us", clock, Target.atMost(2.0),
        n + " single-row UPDATEs, each committed, in a PL/pgSQL procedure timed with clock_timestamp()"));
    if (cpu.stream().noneMatch(c -> Double.isNaN(c[0]) || Double.isNaN(c[1]) || Double.isNaN(c[2]))) {
      out.addAll(twoWays("update_server_cpu_us", "us", cpu, Target.atMost(2.0),
          "backend CPU (utime+stime from /proc/PID/stat) per UPDATE over the same loop"));
    }
    return out;
  }

  /**
   * wal_per_write_tracked_c_vs_untracked: the WAL passes of {@link WriteMetrics#walPass}, three ways; the metric is
   * the WAL records' bytes without full-page images, as for the PL/pgSQL trigger.
   */
  List<Metric> walPerWrite() {
    int n = budget.walWrites();
    List<double[]> records = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      int first = 2_000_000 + r * 3 * n;
      double[] v = new double[3];
      for (String db : order(r)) {
        v[side(db)] = WriteMetrics.walPass(wr, connection(db), db, first, n, r == 0)[1];
      }
      records.add(v);
    }
    return twoWays("wal_per_write", "bytes", records, Target.atMost(1.9),
        "WAL record bytes without full-page images (pg_waldump) / " + n + " committed single-row UPDATEs, after"
            + " CHECKPOINT and a warm-up pass over the same keys");
  }

  /** bulk_update_tracked_c_vs_untracked: one UPDATE of every row, three ways, after VACUUM ANALYZE of the database and CHECKPOINT. */
  List<Metric> bulkUpdate() {
    List<double[]> time = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      double[] t = new double[3];
      for (String db : order(r)) {
        Connection conn = connection(db);
        Db.settle(conn);
        t[side(db)] = Db.timeMillis(conn, "update pgbench_accounts set abalance = abalance + 1");
        log.log("bulk update %-13s %8.0f ms", db, t[side(db)]);
      }
      time.add(t);
    }
    return twoWays("bulk_update", "ms", time, Target.atMost(2.5),
        "UPDATE of all " + ROWS + " rows in one statement, after VACUUM ANALYZE of the database and CHECKPOINT");
  }
}
