package io.gnomon.bench;

import static io.gnomon.bench.WriteRead.ROWS;
import static io.gnomon.bench.WriteRead.SCALE;
import static io.gnomon.bench.WriteRead.TRACKED;
import static io.gnomon.bench.WriteRead.UNTRACKED;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The write-read group: what tracking costs a 200,000-row {@code pgbench_accounts}, measured side by
 * side against an untracked copy in the same cluster. Both copies are loaded identically and both
 * have the Gnomon catalog; only one is tracked. Every pair alternates which side runs first.
 */
final class WriteReadGroup {
  private WriteReadGroup() {}

  static List<Metric> run(PgCluster pg, Budget budget, Path outDir, PrintStream out) {
    Details log = new Details(out);
    Path bin = BenchCluster.binaries();
    Pgbench pgbench = new Pgbench(pg, bin, outDir.resolve("scripts"));
    Machine.describe().forEach(line -> log.log("%s", line));
    log.log("server: %s", serverVersion(pg));
    double freshBytesPerRow = load(pg, pgbench, log);
    boolean withC = loadC(pg, pgbench, log);
    List<Metric> rows = new ArrayList<>();
    try (Connection t = pg.connect(TRACKED); Connection u = pg.connect(UNTRACKED)) {
      WriteRead wr = new WriteRead(pg, budget, pgbench, new Wal(bin, pg.dataDirectory()), log, t, u);
      WriteMetrics writes = new WriteMetrics(wr);
      ReadMetrics reads = new ReadMetrics(wr);
      log.log("load before the writes: %.2f", Machine.load());
      Metric update1 = writes.updateTps(1);
      Metric update2 = writes.updateTps(2);
      List<Metric> server = writes.serverTime();
      List<Metric> wal = writes.walPerWrite();
      List<Metric> bulk = writes.bulkUpdate();
      // the optional C write path, three ways side by side (C trigger, PL/pgSQL trigger, untracked)
      List<Metric> cWrites = new ArrayList<>();
      if (withC) {
        try (Connection tc = pg.connect(CWriteMetrics.TRACKED_C)) {
          CWriteMetrics c = new CWriteMetrics(wr, tc);
          log.log("load before the C write path: %.2f", Machine.load());
          cWrites.addAll(c.updateTps(1));
          cWrites.addAll(c.updateTps(2));
          cWrites.addAll(c.serverTime());
          cWrites.addAll(c.walPerWrite());
          cWrites.addAll(c.bulkUpdate());
          Db.exec(tc, "vacuum analyze");
          cWrites.add(new ReadMetrics(wr).bytesPerVersion(tc, "bytes_per_version_tracked_c", freshBytesPerRow));
        }
      }
      // the writes left autovacuum work behind (the history grew by a million versions): do it now, on both
      // sides, so that it neither competes with the reads for the two cores nor invalidates their cached plans
      for (Connection c : List.of(t, u)) {
        Db.exec(c, "vacuum analyze");
      }
      wr.checkpoint();
      log.log("load before the reads: %.2f", Machine.load());
      Metric pointRead = reads.pointRead();
      Metric coordinate = reads.coordinate();
      List<Metric> pastPoint = reads.pastPointRead();
      if (withC) {
        pastPoint.addAll(reads.pastPointReadC());
      }
      List<Metric> pastScan = reads.pastScan();
      Metric bytes = reads.bytesPerVersion(freshBytesPerRow);
      Metric track = TrackMetrics.run(pg, pgbench, budget, log);
      log.log("load at the end: %.2f", Machine.load());

      rows.add(pointRead);
      rows.add(update1);
      rows.add(update2);
      rows.add(server.get(0));
      rows.add(bulk.get(0));
      rows.add(wal.get(0));
      rows.add(bytes);
      rows.add(pastPoint.get(0));
      rows.add(pastScan.get(0));
      rows.add(coordinate);
      rows.add(track);
      rows.addAll(cWrites);
      // the evidence behind them
      rows.addAll(server.subList(1, server.size()));
      rows.addAll(wal.subList(1, wal.size()));
      rows.addAll(bulk.subList(1, bulk.size()));
      rows.addAll(pastPoint.subList(1, pastPoint.size()));
      rows.addAll(pastScan.subList(1, pastScan.size()));
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } finally {
      log.writeTo(outDir.resolve("write-read.txt"));
    }
    return rows;
  }

  /** Loads both copies and tracks one; returns the bytes per row of the freshly loaded table. */
  private static double load(PgCluster pg, Pgbench pgbench, Details log) {
    for (String db : List.of(UNTRACKED, TRACKED)) {
      pg.createDatabase(db);
      pgbench.initialize(db, SCALE);
      Catalog.install(pg.dataSource(db));
      try (Connection c = pg.connect(db)) {
        Db.exec(c, "create schema bench");
        Db.exec(c, ServerSql.updateLoop(ROWS));
      } catch (SQLException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    try (Connection t = pg.connect(TRACKED); Connection u = pg.connect(UNTRACKED)) {
      double fresh = Db.number(t, "select pg_total_relation_size('pgbench_accounts') / " + ROWS + ".0");
      Db.exec(t, "select gnomon.track('public.pgbench_accounts')");
      Db.exec(t, ServerSql.readLoop(ROWS));
      log.log("loaded %d rows into %s and %s (%.1f bytes per row with its index); tracked %s.pgbench_accounts",
          ROWS, UNTRACKED, TRACKED, fresh, TRACKED);
      Db.exec(t, "vacuum analyze");
      Db.exec(u, "vacuum analyze");
      Db.exec(t, "checkpoint");
      return fresh;
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /**
   * Loads a third copy, tracked through the optional C module (gnomon.use_c_module); returns false, and the group
   * runs without the C metrics, when the server cannot load the library.
   */
  private static boolean loadC(PgCluster pg, Pgbench pgbench, Details log) {
    String db = CWriteMetrics.TRACKED_C;
    pg.createDatabase(db);
    pgbench.initialize(db, SCALE);
    Catalog.install(pg.dataSource(db));
    try (Connection c = pg.connect(db)) {
      Db.exec(c, "create schema bench");
      Db.exec(c, ServerSql.updateLoop(ROWS));
      Db.exec(c, "select gnomon.track('public.pgbench_accounts')");
      try {
        Db.exec(c, "select gnomon.use_c_module(true, '" + CWriteMetrics.library().replace("'", "''") + "')");
      } catch (RuntimeException e) {
        log.log("the C module %s could not be loaded, so the C write path is not measured: %s",
            CWriteMetrics.library(), e.getMessage());
        return false;
      }
      log.log("loaded %d rows into %s, tracked through the C module %s", ROWS, db, CWriteMetrics.library());
      Db.exec(c, "vacuum analyze");
      Db.exec(c, "checkpoint");
      return true;
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private static String serverVersion(PgCluster pg) {
    try (Connection c = pg.connect("postgres")) {
      return Db.text(c, "select version()") + "; settings: " + String.join(", ", Db.lines(c,
          "select name || '=' || current_setting(name) from pg_settings where name in ('fsync',"
              + " 'synchronous_commit', 'shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'full_page_writes',"
              + " 'wal_compression', 'autovacuum', 'plan_cache_mode', 'work_mem', 'jit') order by name"));
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }
}
