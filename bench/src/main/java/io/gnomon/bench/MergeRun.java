package io.gnomon.bench;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * What the merge group's measurements share, and its primitives: the database (a tracked 200,000-row {@code
 * pgbench_accounts}), one connection, branches written through their views, a timed merge with its backend CPU, and
 * the plans of the statements inside one merge.
 *
 * <p>Keys: the merged rows are the 50,000 keys with {@code aid % 4 = 0}; concurrent writers update keys with {@code
 * aid % 4 = 2}, so they never touch a row the merge writes; the size series uses keys with {@code aid % 4 = 1}.
 */
final class MergeRun {
  static final String DB = "merge";
  static final int SCALE = 2;
  static final int ROWS = 100_000 * SCALE;
  static final String MERGED_KEYS = "aid % 4 = 0";
  static final int MERGED = ROWS / 4;

  /**
   * One merge: its wall-clock time, the backend's CPU and minor page faults, and what it did; {@code timedOut} when
   * it hit the limit.
   */
  record Merge(double millis, double cpuMillis, long faults, String status, long adds, long modifications,
      long deletes, long conflicts, boolean timedOut) {
    long written() {
      return adds + modifications + deletes;
    }
  }

  private final PgCluster pg;
  private final Connection c;
  private final Details log;
  private final int timeoutSeconds;

  MergeRun(PgCluster pg, Connection c, Details log, int timeoutSeconds) {
    this.pg = pg;
    this.c = c;
    this.log = log;
    this.timeoutSeconds = timeoutSeconds;
  }

  /** Creates and loads the database: pgbench's tables, the Gnomon catalog, {@code pgbench_accounts} tracked. */
  static void load(PgCluster pg, Pgbench pgbench, Details log) {
    pg.createDatabase(DB);
    pgbench.initialize(DB, SCALE);
    Catalog.install(pg.dataSource(DB));
    try (Connection c = pg.connect(DB)) {
      Db.exec(c, "select gnomon.track('public.pgbench_accounts')");
      Db.exec(c, "vacuum analyze");
      Db.exec(c, "checkpoint");
      log.log("loaded %,d rows into %s.pgbench_accounts and tracked it", ROWS, DB);
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  PgCluster pg() {
    return pg;
  }

  Connection connection() {
    return c;
  }

  Details log() {
    return log;
  }

  int timeoutSeconds() {
    return timeoutSeconds;
  }

  /** Creates a branch from main now. */
  void branch(String name) {
    Db.exec(c, "select gnomon.branch_create(" + Db.literal(name) + ")");
  }

  /**
   * Creates a branch from main now and updates {@code where}'s rows on it through its view ({@code abalance + 1}),
   * then vacuums and analyzes the branch tables; returns the number of rows written.
   */
  long branchWithUpdates(String name, String where) {
    branch(name);
    long t0 = System.nanoTime();
    Db.exec(c, "select gnomon.branch_use(" + Db.literal(name) + ")");
    long n;
    try (Statement st = c.createStatement()) {
      n = st.executeUpdate("update pgbench_accounts set abalance = abalance + 1 where " + where);
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } finally {
      Db.exec(c, "select gnomon.branch_use('main')");
    }
    // vacuum too: the first reader of the branch's fresh rows would otherwise pay their hint bits, and a merge
    // measured twice on the same branch would find them set the second time
    Db.exec(c, "vacuum analyze gnomon_t.pgbench_accounts_b, gnomon_t.pgbench_accounts_bh");
    log.log("branch %s: %,d rows updated through its view in %.1f s (set-up, not measured)", name, n,
        (System.nanoTime() - t0) / 1e9);
    return n;
  }

  /**
   * VACUUM (main and its history: rolled-back merges and UPDATEs leave dead rows in both) and CHECKPOINT, so that no
   * side inherits the previous one's dead rows or dirty buffers.
   */
  void settle() {
    Db.exec(c, "vacuum pgbench_accounts, gnomon_t.pgbench_accounts_h");
    Db.exec(c, "checkpoint");
  }

  /** {@code gnomon.merge(source, target)}, committed, timed, under the statement timeout. */
  Merge merge(String source, String target) {
    return merge(c, source, target, false);
  }

  /**
   * {@code gnomon.merge(source, target)} on connection {@code on}, timed, under the statement timeout; committed, or
   * in a transaction then rolled back ({@code rollBack}), so that main keeps its state and the same branch can be
   * merged again. The time includes the commit or the rollback.
   */
  Merge merge(Connection on, String source, String target, boolean rollBack) {
    BackendCpu cpu = new BackendCpu(on);
    Db.exec(on, "set statement_timeout = '" + timeoutSeconds + "s'");
    OptionalLong cpu0 = cpu.micros();
    OptionalLong faults0 = cpu.minorFaults();
    long t0 = System.nanoTime();
    try (Statement st = on.createStatement()) {
      on.setAutoCommit(!rollBack);
      Merge m;
      try (ResultSet rs = st.executeQuery("select status, adds, modifications, deletes, conflicts from gnomon.merge("
          + Db.literal(source) + ", " + Db.literal(target) + ")")) {
        rs.next();
        if (rollBack) {
          on.rollback();
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        m = new Merge(ms, cpuMillis(cpu, cpu0), faults(cpu, faults0), rs.getString(1), rs.getLong(2),
            rs.getLong(3), rs.getLong(4), rs.getLong(5), false);
      }
      log.log("merge %s -> %s%s: %s, %,d adds, %,d modifications, %,d deletes, %,d conflicts in %.0f ms (backend CPU"
              + " %.0f ms, %,d minor faults)", source, target, rollBack ? " (rolled back)" : "", m.status(), m.adds(),
          m.modifications(), m.deletes(), m.conflicts(), m.millis(), m.cpuMillis(), m.faults());
      return m;
    } catch (SQLException e) {
      rollBackQuietly(on, rollBack);
      if ("57014".equals(e.getSQLState())) {
        log.log("merge %s -> %s: not finished after %d s (statement_timeout): cancelled, nothing written", source,
            target, timeoutSeconds);
        return new Merge(timeoutSeconds * 1e3, cpuMillis(cpu, cpu0), faults(cpu, faults0), "timeout", 0, 0, 0, 0,
            true);
      }
      throw new IllegalStateException("merge " + source + " -> " + target + ": " + e.getMessage(), e);
    } finally {
      try {
        on.setAutoCommit(true);
      } catch (SQLException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
      Db.exec(on, "reset statement_timeout");
    }
  }

  private static void rollBackQuietly(Connection on, boolean inTransaction) {
    if (inTransaction) {
      try {
        on.rollback();
      } catch (SQLException ignored) {
        // the connection is reset by setAutoCommit(true) below, or reported by the next statement
      }
    }
  }

  /**
   * The tracked baseline: an UPDATE of the same rows on main ({@code abalance + 1}) in a transaction that is then
   * rolled back, so main keeps the state the merges start from; the trigger writes the same history as a committed
   * UPDATE would. Returns {@code [milliseconds, backend CPU milliseconds]}.
   */
  double[] trackedUpdate(String where) {
    double[] u = trackedUpdate(c, where);
    return new double[] {u[0], u[1]};
  }

  /**
   * {@link #trackedUpdate(String)} on connection {@code on}. Returns {@code [milliseconds, backend CPU milliseconds,
   * minor page faults]}.
   */
  double[] trackedUpdate(Connection on, String where) {
    BackendCpu cpu = new BackendCpu(on);
    OptionalLong cpu0 = cpu.micros();
    OptionalLong faults0 = cpu.minorFaults();
    long t0 = System.nanoTime();
    long n;
    try (Statement st = on.createStatement()) {
      on.setAutoCommit(false);
      n = st.executeUpdate("update pgbench_accounts set abalance = abalance + 1 where " + where);
      on.rollback();
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } finally {
      try {
        on.setAutoCommit(true);
      } catch (SQLException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    double ms = (System.nanoTime() - t0) / 1e6;
    double cpuMs = cpuMillis(cpu, cpu0);
    long faults = faults(cpu, faults0);
    log.log("tracked UPDATE of the same %,d rows on main: %.0f ms (backend CPU %.0f ms, %,d minor faults)", n, ms,
        cpuMs, faults);
    return new double[] {ms, cpuMs, faults};
  }

  private static long faults(BackendCpu cpu, OptionalLong before) {
    OptionalLong after = cpu.minorFaults();
    return before.isPresent() && after.isPresent() ? after.getAsLong() - before.getAsLong() : -1;
  }

  private static double cpuMillis(BackendCpu cpu, OptionalLong before) {
    OptionalLong after = cpu.micros();
    return before.isPresent() && after.isPresent() ? (after.getAsLong() - before.getAsLong()) / 1e3 : Double.NaN;
  }

  /**
   * Runs one merge in a transaction that is rolled back, with auto_explain on every nested statement (analyze, no
   * per-node timing), and writes to the details the statements that took at least {@code minMillis}, slowest first,
   * then their plans.
   */
  void explainMerge(String source, String target, int minMillis) {
    List<String[]> statements = new ArrayList<>();
    try (Statement st = c.createStatement()) {
      st.execute("load 'auto_explain'");
      st.execute("set auto_explain.log_min_duration = " + minMillis);
      st.execute("set auto_explain.log_analyze = on");
      st.execute("set auto_explain.log_timing = off");
      st.execute("set auto_explain.log_nested_statements = on");
      st.execute("set client_min_messages = log");
      st.execute("set statement_timeout = '" + timeoutSeconds + "s'");
      c.setAutoCommit(false);
      st.clearWarnings();
      long t0 = System.nanoTime();
      String outcome;
      try {
        st.executeQuery("select status from gnomon.merge(" + Db.literal(source) + ", " + Db.literal(target) + ")")
            .close();
        outcome = "finished";
      } catch (SQLException e) {
        outcome = "failed: " + e.getMessage();
      }
      double ms = (System.nanoTime() - t0) / 1e6;
      for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
        String text = w.getMessage();
        if (text.startsWith("duration: ")) {
          statements.add(new String[] {text.substring(10, text.indexOf(" ms")), text});
        }
      }
      c.rollback();
      c.setAutoCommit(true);
      st.execute("reset client_min_messages");
      st.execute("reset statement_timeout");
      st.execute("set auto_explain.log_min_duration = -1");
      statements.sort((a, b) -> Double.compare(Double.parseDouble(b[0]), Double.parseDouble(a[0])));
      StringBuilder summary = new StringBuilder(String.format(Locale.ROOT,
          "gnomon.merge(%s, %s) in a rolled-back transaction under auto_explain: %s in %.0f ms%n%n", source, target,
          outcome, ms));
      StringBuilder plans = new StringBuilder();
      for (String[] s : statements) {
        String text = s[1];
        int q = text.indexOf("Query Text:");
        String query = q < 0 ? "" : text.substring(q + 11).strip();
        // the query text runs until the plan's first node, the first line with a cost estimate
        String firstLines = query.lines().takeWhile(l -> !l.contains("(cost=")).map(String::strip)
            .filter(l -> !l.isEmpty()).reduce((a, b) -> a + " " + b).orElse("");
        summary.append(String.format(Locale.ROOT, "%10s ms  %s%n", s[0],
            firstLines.length() > 160 ? firstLines.substring(0, 160) + " …" : firstLines));
        plans.append(text.lines().map(l -> l.length() > 400 ? l.substring(0, 400) + " …" : l)
            .reduce((a, b) -> a + "\n" + b).orElse("")).append("\n\n");
      }
      log.section("statements inside one merge " + source + " -> " + target + " taking " + minMillis
          + " ms or more, slowest first", summary.toString());
      log.section("their plans (auto_explain: analyze, rows, no per-node timing)", plans.toString());
    } catch (SQLException e) {
      log.log("no plans of the merge %s -> %s: %s", source, target, e.getMessage());
    }
  }

  /** Rows per second of a merge that wrote {@code rows} rows. */
  static double rowsPerSecond(long rows, double millis) {
    return rows * 1e3 / millis;
  }
}
