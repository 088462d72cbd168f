package io.gnomon.bench;

import static io.gnomon.bench.WriteRead.ROWS;
import static io.gnomon.bench.WriteRead.TRACKED;
import static io.gnomon.bench.WriteRead.UNTRACKED;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/** The write path: single-row UPDATE throughput, server time and CPU, bulk UPDATE, WAL per write. */
final class WriteMetrics {
  static final String UPDATE_SCRIPT =
      "\\set aid random(1, " + ROWS + ")\n"
          + "\\set delta random(-5000, 5000)\n"
          + "update pgbench_accounts set abalance = abalance + :delta where aid = :aid;\n";

  private final WriteRead wr;
  private final Budget budget;
  private final Details log;

  WriteMetrics(WriteRead wr) {
    this.wr = wr;
    this.budget = wr.budget();
    this.log = wr.details();
  }

  /** update_Nc_tracked_vs_untracked: pgbench single-row UPDATE tps with N clients. */
  Metric updateTps(int clients) {
    List<double[]> runs = Paired.alternate(budget.repeats(), () -> updateTps(TRACKED, clients),
        () -> updateTps(UNTRACKED, clients));
    return Metric.paired("update_" + clients + "c_tracked_vs_untracked", "tps", runs, Target.atLeast(0.80),
        "pgbench -M prepared, " + clients + " client(s), " + budget.pgbenchSeconds()
            + " s per run, single-row UPDATE of a random aid; checkpoint before each run");
  }

  private double updateTps(String db, int clients) {
    wr.checkpoint();
    Pgbench.Result r = wr.pgbench().script(db, "update", UPDATE_SCRIPT, clients, budget.pgbenchSeconds(), Map.of(),
        Map.of());
    log.log("update %dc %-12s %9.0f tps", clients, db, r.tps());
    return r.tps();
  }

  /**
   * update_server_us_tracked_vs_untracked (time per committed single-row UPDATE inside the server)
   * and update_server_cpu_us_tracked_vs_untracked (the backend's CPU for the same loop).
   */
  List<Metric> serverTime() {
    int n = budget.serverLoop();
    List<double[]> clock = new ArrayList<>();
    List<double[]> cpu = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      int first = r * n;
      double[] t = new double[2];
      double[] c = new double[2];
      String[] order = Budget.trackedFirst(r) ? new String[] {TRACKED, UNTRACKED} : new String[] {UNTRACKED, TRACKED};
      for (String db : order) {
        int side = TRACKED.equals(db) ? 0 : 1;
        Connection conn = wr.connection(db);
        wr.checkpoint();
        BackendCpu backend = new BackendCpu(conn);
        OptionalLong cpu0 = backend.micros();
        t[side] = Db.number(conn, "call bench.update_loop(" + n + ", " + first + ", null)");
        OptionalLong cpu1 = backend.micros();
        c[side] = cpu0.isPresent() && cpu1.isPresent() ? (cpu1.getAsLong() - cpu0.getAsLong()) / (double) n : Double.NaN;
        log.log("server update loop %-12s %7.1f us/update (clock), %7.1f us CPU", db, t[side], c[side]);
      }
      clock.add(t);
      cpu.add(c);
    }
    List<Metric> out = new ArrayList<>();
    out.add(Metric.paired("update_server_us_tracked_vs_untracked", "us", clock, Target.atMost(2.0),
        n + " single-row UPDATEs, each committed, in a PL/pgSQL procedure timed with clock_timestamp()"));
    if (cpu.stream().noneMatch(c -> Double.isNaN(c[0]) || Double.isNaN(c[1]))) {
      out.add(Metric.paired("update_server_cpu_us_tracked_vs_untracked", "us", cpu, Target.atMost(2.0),
          "backend CPU (utime+stime from /proc/PID/stat) per UPDATE over the same loop"));
    }
    return out;
  }

  /**
   * wal_per_write_tracked_vs_untracked: after a CHECKPOINT, a warm-up pass of single-row UPDATEs and
   * then a measured pass over the same keys; the WAL records' bytes without full-page images (pg_waldump's
   * "Record size"), what a write itself logs. The warm-up was meant to leave no full-page image in the
   * measured pass, but it cannot: on pgbench's full pages (fillfactor 100) some UPDATEs find no room for a
   * HOT update, move the row to a page taken from the free space map and insert a primary-key entry, and both
   * pages' first touch since the checkpoint logs an 8 kB image. How many do depends on the pages' free space
   * and on whether an autovacuum or autoanalyze holds the xmin horizon at that moment (0 to 100 of 1,000 on
   * either side, in runs minutes apart), so those images are reported beside it
   * (wal_per_write_with_fpi_...), not in it. Also the cold figure: right after a CHECKPOINT, on keys not
   * touched since, where each write's first touch of a page logs a full-page image.
   */
  List<Metric> walPerWrite() {
    int n = budget.walWrites();
    List<double[]> warm = new ArrayList<>();
    List<double[]> records = new ArrayList<>();
    List<double[]> cold = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      int first = 1_000_000 + r * 3 * n;
      double[] w = new double[2];
      double[] rec = new double[2];
      double[] c = new double[2];
      String[] order = Budget.trackedFirst(r) ? new String[] {TRACKED, UNTRACKED} : new String[] {UNTRACKED, TRACKED};
      for (String db : order) {
        int side = TRACKED.equals(db) ? 0 : 1;
        double[] pass = walPass(wr, wr.connection(db), db, first, n, r == 0);
        w[side] = pass[0];
        rec[side] = pass[1];
        c[side] = pass[2];
      }
      warm.add(w);
      records.add(rec);
      cold.add(c);
    }
    return List.of(
        Metric.paired("wal_per_write_tracked_vs_untracked", "bytes", records, Target.atMost(1.9),
            "WAL record bytes without full-page images (pg_waldump) / " + n + " committed single-row UPDATEs, after"
                + " CHECKPOINT and a warm-up pass over the same keys"),
        Metric.paired("wal_per_write_with_fpi_tracked_vs_untracked", "bytes", warm, null,
            "pg_current_wal_insert_lsn() difference / " + n + " committed single-row UPDATEs, the same pass:"
                + " full-page images of pages first touched by non-HOT UPDATEs included"),
        Metric.paired("wal_per_write_after_checkpoint_tracked_vs_untracked", "bytes", cold, null,
            "the same, right after CHECKPOINT on keys untouched since: full-page images included"));
  }

  /**
   * One database's WAL passes of n single-row UPDATEs from key index first: after a CHECKPOINT, a warm-up pass and
   * the measured pass over the same keys, then a CHECKPOINT and a cold pass over the next n keys. Returns the
   * measured pass's bytes per update with and without full-page images, and the cold pass's bytes per update.
   */
  static double[] walPass(WriteRead wr, Connection conn, String db, int first, int n, boolean dump) {
    Details log = wr.details();
    Db.exec(conn, "checkpoint");
    Db.exec(conn, "call bench.update_loop(" + n + ", " + first + ", null)");
    String from = Wal.insertLsn(conn);
    Db.exec(conn, "call bench.update_loop(" + n + ", " + first + ", null)");
    Wal.Span span = wr.wal().since(conn, from);
    double withImages = span.bytes() / (double) n;
    double records = (span.fpiBytes() < 0 ? span.bytes() : span.bytes() - span.fpiBytes()) / (double) n;
    log.log("WAL warm %-12s %6.0f B/update, %6.0f B/update without full-page images (%d B of images in all,"
        + " %d records)", db, withImages, records, span.fpiBytes(), span.records());
    if (dump) {
      log.section("pg_waldump --stats=record, warm pass, " + db + ", " + n + " updates", span.breakdown());
    }
    Db.exec(conn, "checkpoint");
    String coldFrom = Wal.insertLsn(conn);
    Db.exec(conn, "call bench.update_loop(" + n + ", " + (first + n) + ", null)");
    Wal.Span coldSpan = wr.wal().since(conn, coldFrom);
    double cold = coldSpan.bytes() / (double) n;
    log.log("WAL cold %-12s %6.0f B/update (full-page images %.0f B/update)", db, cold,
        coldSpan.fpiBytes() / (double) n);
    if (dump) {
      log.section("pg_waldump --stats=record, cold pass right after CHECKPOINT, " + db + ", " + n + " updates",
          coldSpan.breakdown());
    }
    return new double[] {withImages, records, cold};
  }

  /** bulk_update_tracked_vs_untracked: one UPDATE of every row, after VACUUM ANALYZE of the database and CHECKPOINT. */
  List<Metric> bulkUpdate() {
    List<double[]> time = new ArrayList<>();
    List<double[]> walBytes = new ArrayList<>();
    for (int r = 0; r < budget.repeats(); r++) {
      double[] t = new double[2];
      double[] w = new double[2];
      String[] order = Budget.trackedFirst(r) ? new String[] {TRACKED, UNTRACKED} : new String[] {UNTRACKED, TRACKED};
      for (String db : order) {
        int side = TRACKED.equals(db) ? 0 : 1;
        Connection conn = wr.connection(db);
        Db.settle(conn);
        String from = Wal.insertLsn(conn);
        t[side] = Db.timeMillis(conn, "update pgbench_accounts set abalance = abalance + 1");
        w[side] = Db.number(conn, "select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '" + from + "')") / ROWS;
        log.log("bulk update %-12s %8.0f ms, %5.0f B WAL/row", db, t[side], w[side]);
      }
      time.add(t);
      walBytes.add(w);
    }
    return List.of(
        Metric.paired("bulk_update_tracked_vs_untracked", "ms", time, Target.atMost(2.5),
            "UPDATE of all " + ROWS + " rows in one statement, after VACUUM ANALYZE of the database and CHECKPOINT"),
        Metric.paired("bulk_update_wal_per_row_tracked_vs_untracked", "bytes", walBytes, null,
            "WAL of the same bulk UPDATE per row (full-page images included)"));
  }
}
