package io.gnomon.bench;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The feed group's database and its writes: three identical copies of a 200,000-row {@code pgbench_accounts}, each
 * captured by one system, and the same deterministic writes applied to each in turn.
 *
 * <ul>
 *   <li>{@code public.pgbench_accounts}: tracked by Gnomon, batches cut by {@code gnomon.tick()};
 *   <li>{@code public.pgq_accounts}: a PgQ queue fed by {@code pgq.logutriga(queue, 'backup')} (new row in {@code
 *       ev_data}, old row in {@code ev_extra2}), batches cut by {@code pgq.ticker()};
 *   <li>{@code public.w2j_accounts}: {@code REPLICA IDENTITY FULL} (old rows in the WAL), read back through logical
 *       replication slots with wal2json; its slots are created just before its writes, so they decode those only.
 * </ul>
 *
 * <p>The writes: {@code versions} single-row {@code UPDATE}s in transactions of {@link #PER_TXN}, keys in the
 * permutation {@code 1 + (i * 7919) mod 200000}, a server-side procedure with a {@code COMMIT} after each
 * transaction; every {@link #TICK_EVERY} versions the capture's ticker runs, so Gnomon's and PgQ's batches are cut at
 * the same points (one tick per 10,000 versions, about a second of tracked writes on an idle 2-core machine).
 */
final class FeedSetup {
  static final String DB = "feed";
  static final String TRACKED = "public.pgbench_accounts";
  static final String PGQ_TABLE = "public.pgq_accounts";
  static final String W2J_TABLE = "public.w2j_accounts";
  static final String QUEUE = "bench_feed";
  static final int SCALE = 2;
  static final int ROWS = 100_000 * SCALE;
  static final int PER_TXN = 10;
  static final int TICK_EVERY = 10_000;

  private FeedSetup() {}

  /** Creates and loads the database: the three copies, the Gnomon catalog, tracking, the writer procedure. */
  static void load(PgCluster pg, Pgbench pgbench, Details log) {
    pg.createDatabase(DB);
    pgbench.initialize(DB, SCALE);
    Catalog.install(pg.dataSource(DB));
    try (Connection c = pg.connect(DB)) {
      for (String copy : List.of(PGQ_TABLE, W2J_TABLE)) {
        Db.exec(c, "create table " + copy + " (like public.pgbench_accounts including all)");
        Db.exec(c, "insert into " + copy + " select * from public.pgbench_accounts");
      }
      Db.exec(c, "alter table " + W2J_TABLE + " replica identity full");
      Db.exec(c, "select gnomon.track('" + TRACKED + "')");
      Db.exec(c, "create schema bench");
      for (String table : List.of(TRACKED, PGQ_TABLE, W2J_TABLE)) {
        Db.exec(c, writer(table));
      }
      Db.exec(c, "vacuum analyze");
      Db.exec(c, "checkpoint");
      log.log("loaded %d rows into %s, %s and %s; tracked %s", ROWS, TRACKED, PGQ_TABLE, W2J_TABLE, TRACKED);
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /**
   * Installs PgQ: the extension, a queue that ticks whenever {@code pgq.ticker()} finds new events (so the writer
   * decides where batches end), the capture trigger and {@code consumers} consumers. Empty when it works, else why
   * not.
   */
  static Optional<String> installPgq(Connection c, List<String> consumers) {
    try {
      Db.exec(c, "create extension if not exists pgq");
    } catch (IllegalStateException e) {
      return Optional.of("cannot create extension pgq (" + firstLine(e.getMessage()) + ")");
    }
    Db.exec(c, "select pgq.create_queue('" + QUEUE + "')");
    Db.exec(c, "select pgq.set_queue_config('" + QUEUE + "', 'ticker_max_count', '1')");
    Db.exec(c, "create trigger pgq_capture after insert or update or delete on " + PGQ_TABLE
        + " for each row execute function pgq.logutriga('" + QUEUE + "', 'backup')");
    for (String consumer : consumers) {
      Db.exec(c, "select pgq.register_consumer('" + QUEUE + "', " + Db.literal(consumer) + ")");
    }
    return Optional.empty();
  }

  /** Creates logical replication slots with wal2json; empty when it works, else why not. */
  static Optional<String> createSlots(Connection c, List<String> slots) {
    List<String> made = new ArrayList<>();
    try {
      allowOutputPlugin(c, "wal2json");
      for (String slot : slots) {
        Db.exec(c, "select pg_create_logical_replication_slot(" + Db.literal(slot) + ", 'wal2json')");
        made.add(slot);
      }
      return Optional.empty();
    } catch (IllegalStateException e) {
      for (String slot : made) {
        Db.exec(c, "select pg_drop_replication_slot(" + Db.literal(slot) + ")");
      }
      return Optional.of("cannot create a wal2json slot (" + firstLine(e.getMessage()) + ")");
    }
  }

  /**
   * Lets {@code plugin} be named as a logical decoding output plugin where the server restricts them (the setting
   * {@code output_plugin_libraries} of recent minor releases, which lists {@code pgoutput, test_decoding} only):
   * adds it with {@code ALTER SYSTEM} and reloads the configuration, and waits until this session sees it (new
   * sessions read it at their start). Nothing where the setting does not exist or names it already.
   */
  static void allowOutputPlugin(Connection c, String plugin) {
    String current = Db.text(c, "select (select setting from pg_settings where name = 'output_plugin_libraries')");
    if (current == null || List.of(current.split("\\s*,\\s*")).contains(plugin)) {
      return;
    }
    List<String> names = new ArrayList<>();
    for (String name : current.split("\\s*,\\s*")) {
      if (!name.isBlank()) {
        names.add(name.trim());
      }
    }
    names.add(plugin);
    String wanted = String.join(", ", names);
    // a list setting: one literal per name (one literal for the whole would be one name with commas in it)
    Db.exec(c, "alter system set output_plugin_libraries = "
        + String.join(", ", names.stream().map(Db::literal).toList()));
    Db.exec(c, "select pg_reload_conf()");
    Db.waitUntil(5_000, () -> wanted.equals(
        Db.text(c, "select (select setting from pg_settings where name = 'output_plugin_libraries')")));
  }

  /** Drops the slots (they hold WAL back). */
  static void dropSlots(Connection c, List<String> slots) {
    for (String slot : slots) {
      Db.exec(c, "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = "
          + Db.literal(slot));
    }
  }

  /**
   * Applies the writes to {@code table}, running {@code tick} (SQL, or null for none) every {@link #TICK_EVERY}
   * versions and once at the end. Returns the seconds it took.
   */
  static double write(Connection c, String table, int versions, String tick) {
    String sql = "call " + writerName(table) + "(" + versions + ", " + PER_TXN + ", " + TICK_EVERY + ", "
        + (tick == null ? "null" : Db.literal(tick)) + ")";
    return Db.timeMillis(c, sql) / 1e3;
  }

  /**
   * Makes every commit so far visible to logical decoding: with {@code synchronous_commit = off}, WAL reaches disk up
   * to {@code wal_writer_delay} later, and a slot decodes only flushed WAL.
   */
  static void flushWal(Connection c) {
    Db.exec(c, "checkpoint");
  }

  /**
   * The writer of one table: a procedure, so that it commits each transaction without a round trip, with a static
   * UPDATE (planned once, like a prepared statement).
   */
  private static String writer(String table) {
    return "create procedure " + writerName(table) + "(versions int, per_txn int, tick_every int, tick text)\n"
        + "language plpgsql as $$\n"
        + "begin\n"
        + "  for i in 0..versions - 1 loop\n"
        + "    update " + table + " set abalance = abalance + 1\n"
        + "     where aid = 1 + (i::bigint * 7919 % " + ROWS + ")::int;\n"
        + "    if (i + 1) % per_txn = 0 then\n"
        + "      commit;\n"
        + "      if tick is not null and (i + 1) % tick_every = 0 then\n"
        + "        execute tick;\n"
        + "        commit;\n"
        + "      end if;\n"
        + "    end if;\n"
        + "  end loop;\n"
        + "  commit;\n"
        + "  if tick is not null then\n"
        + "    execute tick;\n"
        + "  end if;\n"
        + "end $$";
  }

  private static String writerName(String table) {
    return "bench.write_" + table.substring(table.indexOf('.') + 1);
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
