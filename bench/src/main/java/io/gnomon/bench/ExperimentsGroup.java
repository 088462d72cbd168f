package io.gnomon.bench;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * The experiments group: changes to the generated SQL or settings that the measurements suggest, tried on a
 * throwaway copy and measured side by side with what Gnomon installs today. Nothing here changes
 * Gnomon; each variant replaces a generated function (or adds an index) in the benchmark's own
 * database only. Rows are named {@code exp_…}; their baseline is today's code, so a ratio below 1
 * is a gain.
 */
final class ExperimentsGroup {
  private static final String DB = "experiments";
  private static final int ROWS = WriteRead.ROWS;

  private ExperimentsGroup() {}

  static List<Metric> run(PgCluster pg, Budget full, Path outDir, PrintStream out) {
    Budget budget = new Budget(full.quick(), Math.min(full.repeats(), 3), full.pgbenchSeconds(), full.latencySeconds(),
        Math.min(full.serverLoop(), 20_000), full.walWrites(), full.scanRepeats());
    Details log = new Details(out);
    Pgbench pgbench = new Pgbench(pg, BenchCluster.binaries(), outDir.resolve("scripts"));
    Machine.describe().forEach(line -> log.log("%s", line));
    pg.createDatabase(DB);
    pgbench.initialize(DB, WriteRead.SCALE);
    Catalog.install(pg.dataSource(DB));
    List<Metric> rows = new ArrayList<>();
    try (Connection c = pg.connect(DB)) {
      Db.exec(c, "create schema bench");
      Db.exec(c, ServerSql.updateLoop(ROWS));
      Db.exec(c, "select gnomon.track('public.pgbench_accounts')");
      Db.exec(c, ServerSql.readLoop(ROWS));
      String trigger = Db.text(c, "select format('gnomon_t.%I', trigger_function) from gnomon.tracked_table");
      String history = Db.text(c, "select format('gnomon_t.%I', history_table) from gnomon.tracked_table");
      String asOf = Db.text(c, "select format('gnomon_t.%I', as_of_function) from gnomon.tracked_table");
      // history: every row written about 1.5 times, as single-row transactions
      int writes = budget.quick() ? 20_000 : 300_000;
      Db.exec(c, "call bench.update_loop(" + writes + ", 0, null)");
      Db.exec(c, "vacuum analyze");
      log.log("history: %.0f versions", Db.number(c, "select count(*) from " + history));
      rows.addAll(readVariants(c, budget, log, asOf, history));
      rows.addAll(triggerVariants(c, budget, log, trigger, history));
      rows.add(compressedWal(c, budget, log));
      rows.add(keyOnlyIndex(c, log, history));
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } finally {
      log.writeTo(outDir.resolve("experiments.txt"));
    }
    return rows;
  }

  /**
   * As-of point reads (generic plans, server-side loop): today's function and the same shape without the
   * coordinate's checks. (A history index on (key, g_xid), once an experiment here, is today's index.)
   */
  private static List<Metric> readVariants(Connection c, Budget budget, Details log, String asOf, String history) {
    int n = budget.serverLoop();
    // the shape today's function has for a table without checkpoints, without any check of the coordinate:
    // what the checks cost
    Db.exec(c, "create or replace function bench.as_of_unchecked(coordinate text) returns setof public.pgbench_accounts"
        + " language sql stable as $f$\n"
        + "  with r as materialized (select s.snap, pg_snapshot_xmin(s.snap) as lo"
        + " from (select substr(coordinate, 4)::pg_snapshot as snap) s)\n"
        + "  select l.aid, l.bid, l.abalance, l.filler from public.pgbench_accounts l\n"
        + "   where not exists (select 1 from " + history + " x where x.aid = l.aid and x.g_xid >= (select r.lo from r)\n"
        + "                      and not pg_visible_in_snapshot(x.g_xid, (select r.snap from r)))\n"
        + "  union all\n"
        + "  select h.aid, h.bid, h.abalance, h.filler from (\n"
        + "    select distinct on (x.aid) x.* from " + history + " x\n"
        + "     where x.g_xid >= (select r.lo from r) and not pg_visible_in_snapshot(x.g_xid, (select r.snap from r))\n"
        + "     order by x.aid, x.g_vid) h\n"
        + "   where h.g_op <> 'I'\n$f$");
    String coord = Db.text(c, "select gnomon.coordinate()");
    List<String> variants = List.of(asOf, "bench.as_of_unchecked");
    for (String v : variants) {
      Db.exec(c, "create or replace function bench.loop_" + simple(v) + "(c text, n int) returns double precision"
          + " language plpgsql as $$ declare t0 timestamptz; x int; begin"
          + " perform set_config('plan_cache_mode', 'force_generic_plan', true); t0 := clock_timestamp();"
          + " for i in 0..n-1 loop select abalance into x from " + v + "(c) where aid = " + ServerSql.key("i", ROWS)
          + "; end loop; return extract(epoch from clock_timestamp() - t0) * 1e6 / n; end $$");
    }
    List<Metric> rows = new ArrayList<>();
    DoubleSupplier live = () -> Db.number(c, "select bench.read_loop(" + Db.literal(coord) + ", " + n
        + ", 'force_generic_plan', false)");
    for (String v : variants) {
      DoubleSupplier variant = () -> Db.number(c, "select bench.loop_" + simple(v) + "(" + Db.literal(coord) + ", " + n + ")");
      variant.getAsDouble(); // warm-up
      List<double[]> runs = Paired.alternate(budget.repeats(), variant, live);
      Metric m = Metric.paired("exp_as_of_point_read_" + label(v) + "_vs_live", "us", runs, null,
          "server-side loop of " + n + " point reads, generic plan; baseline: the same loop on the live table");
      log.log("as-of point read %-22s %6.1f us, live %6.1f us", label(v), m.value(), m.baseline());
      rows.add(m);
    }
    return rows;
  }

  /**
   * Today's trigger inserting into the history partition itself rather than through the partitioned
   * parent: the price of tuple routing, which is set up for every statement.
   */
  private static List<Metric> triggerVariants(Connection c, Budget budget, Details log, String trigger,
      String history) {
    String original = Db.text(c, "select pg_get_functiondef(" + Db.literal(trigger + "()") + "::regprocedure)");
    // straight into the partition that takes new versions (the last one: it is open-ended), skipping tuple routing;
    // everything else as today's trigger has it
    String leaf = Db.text(c, "select format('%I.%I', n.nspname, k.relname) from pg_partition_tree("
        + Db.literal(history) + ") p join pg_class k on k.oid = p.relid join pg_namespace n on n.oid = k.relnamespace"
        + " where p.isleaf order by pg_get_expr(k.relpartbound, k.oid) ~ 'MAXVALUE' desc, k.oid desc limit 1");
    String intoLeaf = original.replace("insert into " + history + " ", "insert into " + leaf + " ");
    if (intoLeaf.equals(original)) {
      log.log("trigger experiment skipped: today's trigger does not insert into %s as expected", history);
      return List.of();
    }
    int n = budget.serverLoop();
    List<Metric> rows = new ArrayList<>();
    int[] first = {2_000_000};
    DoubleSupplier bulk = () -> {
      Db.exec(c, "vacuum pgbench_accounts");
      Db.exec(c, "checkpoint");
      return Db.timeMillis(c, "update pgbench_accounts set abalance = abalance + 1");
    };
    DoubleSupplier loop = () -> {
      first[0] += n;
      return Db.number(c, "call bench.update_loop(" + n + ", " + first[0] + ", null)");
    };
    String[][] variants = {{"into_partition", intoLeaf}};
    for (String[] v : variants) {
      DoubleSupplier bulkVariant = withTrigger(c, v[1], original, bulk);
      DoubleSupplier loopVariant = withTrigger(c, v[1], original, loop);
      List<double[]> b = Paired.alternate(budget.repeats(), bulkVariant, bulk);
      List<double[]> l = Paired.alternate(budget.repeats(), loopVariant, loop);
      rows.add(Metric.paired("exp_trigger_" + v[0] + "_bulk_update_vs_today", "ms", b, null,
          "UPDATE of all " + ROWS + " rows with the UPDATE trigger rewritten (" + v[0].replace('_', ' ')
              + "); baseline: today's trigger"));
      rows.add(Metric.paired("exp_trigger_" + v[0] + "_server_us_vs_today", "us", l, null,
          n + " committed single-row UPDATEs with the rewritten trigger; baseline: today's trigger"));
      log.log("trigger %-20s bulk %6.0f ms (today %6.0f), single-row %5.1f us (today %5.1f)", v[0],
          rows.get(rows.size() - 2).value(), rows.get(rows.size() - 2).baseline(), rows.get(rows.size() - 1).value(),
          rows.get(rows.size() - 1).baseline());
    }
    return rows;
  }

  /**
   * WAL per single-row UPDATE right after a CHECKPOINT (full-page images included) with {@code
   * wal_compression = lz4} against {@code off}: a setting, not a code change, that shrinks the
   * full-page images the history index's random leaf writes cause.
   */
  private static Metric compressedWal(Connection c, Budget budget, Details log) {
    int n = budget.walWrites();
    int[] first = {3_000_000};
    java.util.function.Function<String, DoubleSupplier> cold = setting -> () -> {
      Db.exec(c, "set wal_compression = " + setting);
      try {
        Db.exec(c, "checkpoint");
        String from = Wal.insertLsn(c);
        first[0] += n;
        Db.exec(c, "call bench.update_loop(" + n + ", " + first[0] + ", null)");
        return Db.number(c, "select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '" + from + "')") / n;
      } finally {
        Db.exec(c, "reset wal_compression");
      }
    };
    List<double[]> runs = Paired.alternate(budget.repeats(), cold.apply("lz4"), cold.apply("off"));
    Metric m = Metric.paired("exp_wal_after_checkpoint_lz4_vs_off", "bytes", runs, null,
        n + " committed single-row UPDATEs on the tracked table right after CHECKPOINT, wal_compression=lz4;"
            + " baseline: wal_compression=off");
    log.log("WAL per update after a checkpoint: lz4 %.0f B, off %.0f B", m.value(), m.baseline());
    return m;
  }

  /**
   * The history index on the key alone instead of today's (key, g_xid): B-tree deduplication can then
   * keep a key's versions in one posting list. Bytes of index per version, built on the same history.
   */
  private static Metric keyOnlyIndex(Connection c, Details log, String history) {
    Db.exec(c, "create index bench_h_key_only on " + history + " (aid)");
    String leaves = "from pg_partition_tree(" + Db.literal(history) + ") p join pg_index i on i.indrelid = p.relid"
        + " where p.isleaf and pg_get_indexdef(i.indexrelid) ~ ";
    double versions = Db.number(c, "select count(*) from " + history);
    double keyOnly = Db.number(c, "select sum(pg_relation_size(i.indexrelid)) " + leaves + "'\\(aid\\)$'") / versions;
    double today = Db.number(c, "select sum(pg_relation_size(i.indexrelid)) " + leaves + "'\\(aid, g_(xid|vid)\\)$'") / versions;
    Db.exec(c, "drop index gnomon_t.bench_h_key_only");
    log.log("history index bytes per version: (aid) %.1f B, today's (aid, g_xid) %.1f B, over %.0f versions", keyOnly, today,
        versions);
    return Metric.single("exp_history_index_key_only_bytes_per_version_vs_today", keyOnly, "bytes", today, null,
        "pg_relation_size of a fresh btree on (aid) over the history partitions per version; baseline: today's"
            + " (aid, g_xid) index, grown by the writes");
  }

  private static DoubleSupplier withTrigger(Connection c, String variant, String original, DoubleSupplier measure) {
    return () -> {
      Db.exec(c, variant);
      try {
        return measure.getAsDouble();
      } finally {
        Db.exec(c, original);
      }
    };
  }

  private static String simple(String fn) {
    return fn.substring(fn.indexOf('.') + 1).replace("\"", "");
  }

  private static String label(String fn) {
    return fn.startsWith("gnomon_t.") ? "today" : simple(fn).replace("as_of_", "");
  }
}
