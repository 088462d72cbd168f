package io.gnomon.checker.run;

import io.gnomon.Gnomon;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * The checker's tables: tracked tables {@code ck_t1..N} with untracked shadows {@code ck_s1..N} of the same shape,
 * the marker table {@code ck_txn} (each writing transaction inserts its number there first, so a row there means it
 * committed), {@code ck_feed}, where the feed consumer stores each event in the transaction that acknowledges it, and
 * the branch shadows {@code ck_bs1..N}: per (branch, key) the value a branch write left ({@code v} null: deleted on the
 * branch), written in the same transaction as the branch write.
 */
public final class Schema {
  /** Keys per table: few, so that sessions contend for rows. */
  public static final int KEYS = 24;
  /** The schema of the branch views of the tables in {@code public}. */
  public static final String BRANCH_SCHEMA = "gnomon_b_public";
  /** The feed consumer's name. */
  public static final String CONSUMER = "checker";

  private Schema() {}

  public static String tracked(int tbl) {
    return "ck_t" + tbl;
  }

  public static String shadow(int tbl) {
    return "ck_s" + tbl;
  }

  /** The shadow of the branch writes to table {@code tbl}: (b, id) → v, null for a delete on the branch. */
  public static String branchShadow(int tbl) {
    return "ck_bs" + tbl;
  }

  /**
   * Writes what branch writes left in the branch shadow of table {@code tbl}: {@code values} by key, null for a key
   * deleted on the branch. Returns the rows written.
   */
  static int writeBranchShadow(Connection c, int tbl, String branch, List<Long> keys, List<Long> values)
      throws SQLException {
    try (PreparedStatement sh = c.prepareStatement("insert into " + branchShadow(tbl) + " (b, id, v) select ?, r.id, "
        + "r.v from unnest(?::int[], ?::bigint[]) r(id, v) on conflict (b, id) do update set v = excluded.v")) {
      sh.setString(1, branch);
      sh.setArray(2, c.createArrayOf("integer", keys.stream().map(Long::intValue).toArray()));
      sh.setArray(3, c.createArrayOf("bigint", values.toArray()));
      return sh.executeUpdate();
    }
  }

  /** Scratch branch {@code i} (1-based): {@code s1}, {@code s2}, ... */
  public static String scratch(int i) {
    return "s" + i;
  }

  /** Branch {@code i} (1-based): {@code b1}, {@code b2}, ... */
  public static String branch(int i) {
    return "b" + i;
  }

  /** Branch {@code i}'s parent: the previous branch for even {@code i} (nested), else main. */
  public static String parent(int i) {
    return i % 2 == 0 ? branch(i - 1) : "main";
  }

  /**
   * Creates branch {@code i} at a coordinate captured just before, and returns that coordinate: the branch's cutoff.
   */
  public static String createBranch(Connection c, int i) throws SQLException {
    return createBranch(c, branch(i), parent(i), false);
  }

  /** Creates a branch, scratch or logged, of {@code parent} at a coordinate captured just before, and returns it. */
  public static String createBranch(Connection c, String name, String parent, boolean scratch) throws SQLException {
    String at;
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("select gnomon.coordinate()")) {
      rs.next();
      at = rs.getString(1);
    }
    try (PreparedStatement ps = c.prepareStatement("select gnomon.branch_create(?, ?, at => ?, scratch => ?)")) {
      ps.setString(1, name);
      ps.setString(2, parent);
      ps.setString(3, at);
      ps.setBoolean(4, scratch);
      ps.execute();
    }
    return at;
  }

  /**
   * Creates and fills the tables (every even key before tracking, so their first versions are lazy baselines), installs
   * Gnomon and tracks them. Returns the initial rows, by table.
   */
  public static Map<Integer, Map<Long, Long>> create(DataSource ds, int tables) throws SQLException {
    Gnomon.install(ds);
    Map<Integer, Map<Long, Long>> initial = new TreeMap<>();
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("create extension if not exists amcheck");
      st.execute("create table ck_txn (txn bigint primary key, session integer not null, xid xid8 not null)");
      st.execute("create table ck_feed (n bigserial primary key, tbl integer not null, key bigint not null, "
          + "xid xid8 not null, vid bigint not null, op char not null, tick bigint not null, pos text not null, "
          + "before jsonb, after jsonb)");
      for (int t = 1; t <= tables; t++) {
        Map<Long, Long> rows = new TreeMap<>();
        for (String name : List.of(tracked(t), shadow(t))) {
          st.execute("create table " + name + " (id integer primary key, v bigint not null)");
          st.execute("insert into " + name + " select k, -(k + 1) from generate_series(0, " + (KEYS - 1)
              + ", 2) k");
        }
        st.execute("create table " + branchShadow(t) + " (b text not null, id integer not null, v bigint, "
            + "primary key (b, id))");
        for (long k = 0; k < KEYS; k += 2) {
          rows.put(k, -(k + 1));
        }
        initial.put(t, rows);
        st.execute("select gnomon.track('public." + tracked(t) + "')");
      }
    }
    try (Gnomon g = Gnomon.open(ds)) {
      List<String> names = new ArrayList<>();
      for (int t = 1; t <= tables; t++) {
        names.add("public." + tracked(t));
      }
      io.gnomon.feed.Feed.open(g).register(CONSUMER, names, io.gnomon.feed.FeedStart.now(), true);
    }
    return initial;
  }

  /**
   * The generated objects of each tracked table, from Gnomon's catalog: its as-of function, history table, read
   * function at a point (main or a branch) and branch history table.
   */
  public static Map<Integer, String[]> generated(Connection c, int tables) throws SQLException {
    Map<Integer, String[]> out = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(
        "select as_of_function, history_table, gnomon.object_name(base_name, '_at'), "
            + "gnomon.object_name(base_name, '_bh') from gnomon.tracked_table "
            + "where schema_name = 'public' and table_name = ?")) {
      for (int t = 1; t <= tables; t++) {
        ps.setString(1, tracked(t));
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new SQLException(tracked(t) + " is not in gnomon.tracked_table");
          }
          out.put(t, new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)});
        }
      }
    }
    return out;
  }
}
