package io.gnomon.bench;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The branches group (issue 3, section 6): what branches cost, as ratios from one run. Reads and writes on a branch
 * against the same statements on main (the tracked table), a read at depth four against depth one, creating a branch
 * against committing an INSERT, main's throughput with 100,000 open branches against a copy with none, the catalog's
 * bytes per branch, and a diff on a 2,000,000-row table against a 200,000-row one. Every table is a {@code
 * pgbench_accounts}; see {@link BranchReads}, {@link BranchWrites} and {@link BranchScale}.
 */
final class BranchesGroup {
  /** A copy of the branch database's starting point with no branch at all (main's baseline). */
  static final String NONE = "br_none";
  /** The same copy, then 100,000 branches created one by one with gnomon.branch_create. */
  static final String MANY = "br_100k";

  private BranchesGroup() {}

  static List<Metric> run(PgCluster pg, Budget budget, Path outDir, PrintStream out) {
    Details log = new Details(out);
    Pgbench pgbench = new Pgbench(pg, BenchCluster.binaries(), outDir.resolve("scripts"));
    Machine.describe().forEach(line -> log.log("%s", line));
    List<Metric> rows = new ArrayList<>();
    try {
      load(pg, pgbench, log);
      BranchBench b;
      try (Connection c = pg.connect(BranchBench.DB)) {
        log.log("server: %s; %s", Db.text(c, "select version()"), String.join(", ", Db.lines(c,
            "select name || '=' || current_setting(name) from pg_settings where name in ('fsync',"
                + " 'synchronous_commit', 'shared_buffers', 'max_wal_size', 'autovacuum', 'plan_cache_mode', 'jit')"
                + " order by name")));
        b = branches(c, budget, pgbench, log);
        log.log("load before the reads: %.2f", Machine.load());
        BranchReads reads = new BranchReads(b);
        List<Metric> depth1 = reads.depth1VsMain();
        List<Metric> depth4 = reads.depth4VsDepth1();
        reads.explain();
        // the optional C module's branch read, in the same database, then disabled again for the writes
        List<List<Metric>> cReads = reads.cPath();
        log.log("load before the writes: %.2f", Machine.load());
        BranchWrites writes = new BranchWrites(b);
        List<Metric> updates = writes.updates();
        List<Metric> create = writes.createVsInsert();
        List<Metric> cCreate = writes.createVsInsertC();
        rows.add(depth1.get(0));
        rows.add(depth4.get(0));
        cReads.forEach(m -> rows.add(m.get(0)));
        rows.add(updates.get(0));
        rows.add(updates.get(1));
        rows.add(create.get(0));
        if (!cCreate.isEmpty()) {
          rows.add(cCreate.get(0));
        }
        BranchScale scale = new BranchScale(pg, budget, pgbench, log);
        log.log("load before the scale measurements: %.2f", Machine.load());
        List<Metric> many = scale.mainWithManyBranches(NONE, MANY);
        rows.addAll(many.subList(0, 2));
        rows.add(many.get(2));
        Metric diff = scale.diff();
        rows.add(diff);
        log.log("load at the end: %.2f", Machine.load());
        // the evidence behind them
        rows.addAll(depth1.subList(1, depth1.size()));
        rows.addAll(depth4.subList(1, depth4.size()));
        cReads.forEach(m -> rows.addAll(m.subList(1, m.size())));
        rows.addAll(updates.subList(2, updates.size()));
        rows.addAll(create.subList(1, create.size()));
        if (!cCreate.isEmpty()) {
          rows.addAll(cCreate.subList(1, cCreate.size()));
        }
        rows.add(many.get(3));
        rows.addAll(many.subList(4, 6));
      }
      // with every connection closed: the cluster stops while callgrind counts main's loops, and starts again
      rows.addAll(new BranchScale(pg, budget, pgbench, log).mainInstructions(NONE, MANY));
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } finally {
      log.writeTo(outDir.resolve("branches.txt"));
    }
    return rows;
  }

  /** The branch database, tracked, and two copies of it made before any branch exists. */
  private static void load(PgCluster pg, Pgbench pgbench, Details log) throws SQLException {
    long t0 = System.nanoTime();
    pg.createDatabase(BranchBench.DB);
    pgbench.initialize(BranchBench.DB, WriteRead.SCALE);
    Catalog.install(pg.dataSource(BranchBench.DB));
    try (Connection c = pg.connect(BranchBench.DB)) {
      Db.exec(c, "create schema bench");
      Db.exec(c, "select gnomon.track('public.pgbench_accounts')");
      Db.exec(c, BranchSql.readLoop(BranchBench.ROWS));
      Db.exec(c, BranchSql.updateLoop(BranchBench.ROWS));
      Db.exec(c, BranchSql.createLoop());
      Db.exec(c, BranchSql.INSERT_TABLE);
      Db.exec(c, "vacuum analyze");
      Db.exec(c, "checkpoint");
    }
    // copies of the same starting point: main's baseline with no branch, and the one that gets 100,000
    pg.createDatabase(NONE, BranchBench.DB);
    pg.createDatabase(MANY, BranchBench.DB);
    log.log("loaded %d rows into %s, tracked, copied to %s and %s in %.1f s", BranchBench.ROWS, BranchBench.DB, NONE,
        MANY, (System.nanoTime() - t0) / 1e9);
  }

  /** Creates the branches the reads and writes use, and writes on the read branches. */
  private static BranchBench branches(Connection c, Budget budget, Pgbench pgbench, Details log) {
    long t0 = System.nanoTime();
    int rows = BranchBench.ROWS;
    int depth1 = (int) Db.number(c, "select gnomon.branch_create('depth1')");
    Db.exec(c, BranchSql.writeOnBranch(depth1, 100, 0, rows));
    // a chain of four levels; level L writes the keys aid % 400 = 100 * (L - 1): together, the keys written on depth1
    int depth4 = 0;
    for (int level = 1; level <= 4; level++) {
      String parentName = level == 1 ? "main" : "chain" + (level - 1);
      depth4 = (int) Db.number(c, "select gnomon.branch_create('chain" + level + "', '" + parentName + "')");
      Db.exec(c, BranchSql.writeOnBranch(depth4, 400, 100 * (level - 1), rows));
    }
    int logged = (int) Db.number(c, "select gnomon.branch_create('writes_logged')");
    int scratch = (int) Db.number(c, "select gnomon.branch_create('writes_scratch', scratch => true)");
    Db.exec(c, "vacuum analyze");
    log.log("branches: depth1 (id %d, %d keys written), chain1..chain4 (depth 4: id %d, %d keys per level),"
            + " writes_logged (id %d), writes_scratch (id %d), in %.1f s; branch rows: %s", depth1,
        BranchBench.WRITTEN, depth4, BranchBench.WRITTEN / 4, logged, scratch, (System.nanoTime() - t0) / 1e9,
        Db.text(c, "select string_agg(g_branch || ':' || n, ' ' order by g_branch) from (select g_branch, count(*) n"
            + " from gnomon_t.pgbench_accounts_b group by 1) s"));
    Db.exec(c, "checkpoint");
    return new BranchBench(budget, pgbench, log, c, depth1, depth4, logged, scratch);
  }
}
