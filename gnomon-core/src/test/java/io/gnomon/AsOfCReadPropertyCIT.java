package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The C module's as-of read path against the SQL path and the truth, seeded ({@code -Dgnomon.seed=N} replays).
 * Writers on several connections keep transactions open across each other's statements (so coordinates list
 * transactions in progress), write every statement inside a savepoint (so live rows carry subtransaction xids as
 * their xmin; some savepoints roll back), insert, update, delete and change keys; one transaction stays open for
 * long stretches, so readers' xmin stays low and {@code gnomon.row_visible_c} asks pg_subtrans. Snapshot reads are
 * logged at REPEATABLE READ with their coordinate (the truth). Every logged read must come back exactly through the C
 * path (a scan, and point reads of every key with a generic plan) and through the SQL path (the function
 * {@code gnomon.use_c_module(false)} generates, kept under another name), right after the capture and at the end;
 * and for every live row, {@code row_visible_c} true must mean the row is the key's state at the coordinate, false
 * that the history holds a version of the key the coordinate cannot see.
 */
class AsOfCReadPropertyCIT extends GnomonIT {
  private static final int KEYS = 40;
  private static final int WRITERS = 3;

  @Override
  boolean cWritePath() {
    return true;
  }


  private final int[] outcomes = new int[3]; // row_visible_c: true, false, null

  @Test
  void cPathReadsEveryCoordinateAsTheSqlPathAndTheTruth() throws Exception {
    long seed = Seeds.seed();
    System.out.println("AsOfCReadPropertyCIT seed=" + seed + " (replay with -Dgnomon.seed=" + seed + ")");
    Random random = new Random(seed);
    sql("create table kv (k int primary key, v int not null)",
        "insert into kv select g, g from generate_series(1, " + (KEYS / 2) + ") g");
    gnomon().track("public.kv");
    // the SQL path's read, kept beside the C path's under another name
    sql("select gnomon.use_c_module(false)");
    String def = one("select pg_get_functiondef('gnomon_t.kv_as_of(text)'::regprocedure)");
    sql(def.replace("gnomon_t.kv_as_of(", "public.kv_as_of_sql("));
    sql("select gnomon.use_c_module(true, '" + cLibrary() + "')");
    assertTrue(one("select pg_get_functiondef('gnomon_t.kv_as_of(text)'::regprocedure)").contains("row_current_c"),
        "the C path's read is not installed");
    // a point read (every key column pinned) plans the one-arm read; a scan, the two arms
    assertTrue(plan("select v from gnomon_t.kv_as_of($1) where k = 7").contains("as_of_key_c"),
        "a point read does not plan gnomon.as_of_key_c");
    assertTrue(!plan("select v from gnomon_t.kv_as_of($1) where k = 7").contains("kv_h"),
        "a point read still plans the history arm");
    // the point read is one executor node of the module's (as_of_scan.c), not a function scan
    String pointPlan = plan("select v from gnomon_t.kv_as_of($1) where k = 7");
    assertTrue(pointPlan.contains("Custom Scan (gnomon.as_of_key_c)") && !pointPlan.contains("Function Scan"),
        "a point read does not plan the module's node:\n" + pointPlan);
    assertTrue(plan("select v from gnomon_t.kv_as_of($1) where k = 7 and v > 0").contains("Filter: (v > 0)"),
        "the node drops a condition that does not pin the key");
    assertTrue(planWithout("select v from gnomon_t.kv_as_of($1) where k = 7").contains("Function Scan on as_of_key_c"),
        "gnomon.c_key_scan = off does not plan the function scan");
    assertTrue(!plan("select v from gnomon_t.kv_as_of($1) where k > 7").contains("Custom Scan"),
        "a range read plans the module's node");
    assertTrue(!plan("select v from gnomon_t.kv_as_of($1) where k > 7").contains("as_of_key_c"),
        "a range read plans gnomon.as_of_key_c");
    sql("create function public.kv_loop(coordinate text, last int) returns int[] language plpgsql as $f$"
        + " declare r int[] := '{}'; x int; begin"
        + " for i in 0..last loop x := null; select v into x from gnomon_t.kv_as_of(coordinate) where k = i; r := r || x; end loop;"
        + " return r; end $f$");
    String tableId = one("select table_id from gnomon.tracked_table where table_name = 'kv'");
    String trackXid = one("select track_xid from gnomon.tracked_table where table_name = 'kv'");

    List<KvSnapshotRead> reads = new ArrayList<>();
    int checked = 0;
    List<Connection> writers = new ArrayList<>();
    try (Connection reader = connect(); Connection longTx = connect(); Connection freezer = connect()) {
      for (int i = 0; i < WRITERS; i++) {
        Connection w = connect();
        writers.add(w);
        try (Statement st = w.createStatement()) {
          // a key another open transaction wrote: give up, never wait (set before the first transaction, so that no
          // rollback undoes it)
          st.execute("set lock_timeout = '50ms'");
        }
        w.setAutoCommit(false);
      }
      longTx.setAutoCommit(false);
      boolean longOpen = false;
      int[] savepoints = new int[WRITERS];
      for (int step = 0; step < 260; step++) {
        int op = random.nextInt(20);
        if (op < 11) {
          int w = random.nextInt(WRITERS);
          write(writers.get(w), random, "s" + (savepoints[w]++));
        } else if (op < 14) {
          Connection w = writers.get(random.nextInt(WRITERS));
          if (random.nextInt(4) == 0) {
            w.rollback();
          } else {
            w.commit();
          }
        } else if (op == 14) {
          if (longOpen && random.nextBoolean()) {
            longTx.commit();
            longOpen = false;
          } else {
            try (Statement st = longTx.createStatement()) {
              st.execute("select pg_current_xact_id()"); // holds an xid: the readers' xmin stays at or below it
            }
            longOpen = true;
          }
        } else if (op == 15 && random.nextInt(3) == 0) {
          // frozen rows: their xmin stays in the tuple, and must still read as the key's state where it is visible
          try (Statement st = freezer.createStatement()) {
            st.execute("vacuum (freeze) kv");
          }
        } else {
          KvSnapshotRead r = KvSnapshotRead.capture(reader);
          reads.add(r);
          checked += verify(reader, r, tableId, trackXid, random);
        }
      }
      for (Connection w : writers) {
        w.commit();
      }
      longTx.commit();
      for (KvSnapshotRead r : reads) {
        checked += verify(reader, r, tableId, trackXid, random);
      }
    } finally {
      for (Connection w : writers) {
        w.close();
      }
    }
    System.out.println("AsOfCReadPropertyCIT: " + reads.size() + " reads, " + checked + " point reads compared;"
        + " row_visible_c true " + outcomes[0] + ", false " + outcomes[1] + ", null (asked the history) " + outcomes[2]);
    assertTrue(reads.size() > 20, "the seed logged too few reads: " + reads.size());
    assertTrue(outcomes[0] > 0 && outcomes[1] > 0, "the seed exercised too few outcomes of row_visible_c");
  }

  /**
   * A table rewrite (ALTER COLUMN ... TYPE with a USING expression, to the same type: a change Gnomon follows, unlike
   * ADD COLUMN with a volatile default, which it refuses on a table with rows) gives every row the rewriting
   * transaction's xmin and writes no version: the C path must still read the rows as of before it from the live table,
   * as the SQL path does.
   */
  @Test
  void aTableRewriteKeepsThePastRows() throws Exception {
    sql("create table rw (id int primary key, v int not null)",
        "insert into rw select g, g from generate_series(1, 5) g");
    gnomon().track("public.rw");
    String before = one("select gnomon.coordinate()");
    sql("update rw set v = 100 where id = 2", "delete from rw where id = 4",
        "alter table rw alter column v type int using v + 0");
    assertEquals("1", one("select count(distinct xmin::text) from rw"), "the rewrite gave every row the rewriting transaction's xmin");
    try (Connection c = connect()) {
      TreeMap<Integer, Integer> expected = new TreeMap<>(java.util.Map.of(1, 1, 2, 2, 3, 3, 4, 4, 5, 5));
      assertEquals(expected, scan(c, "select id, v from gnomon_t.rw_as_of(?)", before), "C path scan after a rewrite");
      try (PreparedStatement ps = c.prepareStatement("select v from gnomon_t.rw_as_of(?) where id = ?")) {
        for (int k = 0; k <= 6; k++) {
          assertEquals(expected.get(k), point(ps, before, k), "C path point read of key " + k + " after a rewrite");
        }
      }
    }
  }

  /**
   * The point read's own probe on a key of two columns whose order is not the table's, a column dropped before tracking
   * (column numbers with a gap) and one added since with a default (rows written before it lack it): every key, pinned
   * (generic and custom plans), must read as a snapshot logged with the coordinate, at two coordinates with updates,
   * deletes and re-inserted keys since; and a table with row-level security reads its point rows through the fallback.
   */
  @Test
  void pointReadsOfACompositeKeyReadAsTheTruth() throws Exception {
    long seed = Seeds.seed();
    System.out.println("AsOfCReadPropertyCIT.pointReadsOfACompositeKeyReadAsTheTruth seed=" + seed);
    Random random = new Random(seed);
    sql("create table ck (a int, gone int, b text, v int not null, primary key (b, a))",
        "alter table ck drop column gone",
        "insert into ck select g, 'x' || (g % 3), g from generate_series(1, 30) g");
    gnomon().track("public.ck");
    assertTrue(plan("select v from gnomon_t.ck_as_of($1) where a = 1 and b = 'x1'").contains("as_of_key_c"),
        "a point read of a two-column key does not plan gnomon.as_of_key_c");
    assertTrue(!plan("select v from gnomon_t.ck_as_of($1) where a = 1").contains("as_of_key_c"),
        "a read pinning one column of two plans gnomon.as_of_key_c");
    List<String[]> truth = new ArrayList<>(); // coordinate, then "a|b|v|w" rows
    try (Connection c = connect()) {
      for (int round = 0; round < 3; round++) {
        truth.add(logged(c));
        for (int i = 0; i < 12; i++) {
          int a = 1 + random.nextInt(34);
          String b = "'x" + (a % 3) + "'";
          sql(switch (random.nextInt(4)) {
            case 0 -> "delete from ck where a = " + a + " and b = " + b;
            case 1 -> "insert into ck (a, b, v) values (" + a + ", " + b + ", " + random.nextInt(1000) + ") on conflict do nothing";
            default -> "update ck set v = v + 1 where a = " + a + " and b = " + b;
          });
        }
        if (round == 0) {
          sql("alter table ck add column w int default 7");
        }
      }
      truth.add(logged(c));
      for (String[] t : truth) {
        java.util.Set<String> rows = new java.util.HashSet<>(java.util.Arrays.asList(t).subList(1, t.length));
        for (String mode : List.of("force_generic_plan", "force_custom_plan")) {
          try (Statement st = c.createStatement()) {
            st.execute("set plan_cache_mode = " + mode);
          }
          try (PreparedStatement ps = c.prepareStatement("select a, b, v from gnomon_t.ck_as_of(?) where b = ? and a = ?")) {
            for (int a = 0; a <= 35; a++) {
              ps.setString(1, t[0]);
              ps.setString(2, "x" + (a % 3));
              ps.setInt(3, a);
              try (ResultSet rs = ps.executeQuery()) {
                String prefix = a + "|x";
                String expected = rows.stream().filter(x -> x.startsWith(prefix)).findFirst().orElse(null);
                String got = rs.next() ? rs.getInt(1) + "|" + rs.getString(2) + "|" + rs.getInt(3) : null;
                assertEquals(expected, got, "point read of (" + a + ", x" + (a % 3) + ") as of " + t[0] + ", " + mode);
                assertTrue(!rs.next(), "two rows for (" + a + ", x" + (a % 3) + ") as of " + t[0]);
              }
            }
          }
        }
      }
      // row-level security: history cannot apply the policy, so only the table's owner reads it (the grants of
      // gnomon_t follow the table, and enabling row-level security revokes them); a reader's point read may fail
      // with 42501, and must never return a row the policy hides (the C probe of the live row must not bypass it)
      sql("create role ck_reader", "grant usage on schema gnomon, gnomon_t to ck_reader",
          "grant select on all tables in schema gnomon, gnomon_t to ck_reader", "grant select on ck to ck_reader",
          "grant execute on all functions in schema gnomon, gnomon_t to ck_reader",
          "alter table ck enable row level security", "create policy only_x1 on ck for select using (b = 'x1')");
      String[] last = truth.get(truth.size() - 1);
      try (Statement st = c.createStatement()) {
        st.execute("set plan_cache_mode = force_generic_plan");
        st.execute("set role ck_reader");
        assertEquals("42501", org.junit.jupiter.api.Assertions.assertThrows(SQLException.class, () -> st.executeQuery("select * from gnomon_t.ck_h").close())
            .getSQLState(), "under row-level security the reader has no grant on the history");
      }
      try (PreparedStatement ps = c.prepareStatement("select v from gnomon_t.ck_as_of(?) where b = ? and a = ?")) {
        for (int a = 0; a <= 35; a++) {
          ps.setString(1, last[0]);
          ps.setString(2, "x" + (a % 3));
          ps.setInt(3, a);
          String prefix = a + "|x";
          boolean live = java.util.Arrays.asList(last).subList(1, last.length).stream().anyMatch(x -> x.startsWith(prefix));
          try (ResultSet rs = ps.executeQuery()) {
            // the live arm applies the policy; rows of other keys are not the reader's to see
            assertEquals(live && a % 3 == 1, rs.next(), "point read of (" + a + ", x" + (a % 3) + ") under a policy");
          } catch (SQLException e) {
            assertEquals("42501", e.getSQLState(), "point read of (" + a + ", x" + (a % 3) + ") under a policy: " + e.getMessage());
          }
        }
      } finally {
        try (Statement st = c.createStatement()) {
          st.execute("reset role");
          st.execute("reset plan_cache_mode");
        }
      }
    }
  }

  /** A coordinate and the rows of ck ("a|b|v") read in one REPEATABLE READ transaction. */
  private static String[] logged(Connection c) throws SQLException {
    List<String> out = new ArrayList<>();
    c.setAutoCommit(false);
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    try (Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("select gnomon.coordinate()")) {
        rs.next();
        out.add(rs.getString(1));
      }
      try (ResultSet rs = st.executeQuery("select a, b, v from ck")) {
        while (rs.next()) {
          out.add(rs.getInt(1) + "|" + rs.getString(2) + "|" + rs.getInt(3));
        }
      }
    } finally {
      c.commit();
      c.setAutoCommit(true);
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
    return out.toArray(new String[0]);
  }

  /** One statement in its own savepoint (the row's xmin is then a subtransaction's xid), sometimes rolled back. */
  private static void write(Connection c, Random random, String savepoint) throws SQLException {
    int k = 1 + random.nextInt(KEYS);
    String sql = switch (random.nextInt(6)) {
      case 0 -> "insert into kv values (" + k + ", " + random.nextInt(1000) + ") on conflict (k) do nothing";
      case 1 -> "delete from kv where k = " + k;
      case 2 -> "update kv set k = " + (1 + random.nextInt(KEYS)) + " where k = " + k;
      default -> "update kv set v = v + " + (1 + random.nextInt(9)) + " where k = " + k;
    };
    try (Statement st = c.createStatement()) {
      st.execute("savepoint " + savepoint);
      try {
        st.execute(sql);
        st.execute(random.nextInt(5) == 0 ? "rollback to savepoint " + savepoint : "release savepoint " + savepoint);
      } catch (SQLException e) {
        // a row lock held by another open transaction (55P03) or a key taken (23505): undo the statement only
        if (!"55P03".equals(e.getSQLState()) && !"23505".equals(e.getSQLState())) {
          throw e;
        }
        st.execute("rollback to savepoint " + savepoint);
      }
    }
  }

  private int verify(Connection c, KvSnapshotRead r, String tableId, String trackXid, Random random) throws SQLException {
    assertEquals(r.rows(), scan(c, "select k, v from gnomon_t.kv_as_of(?)", r.coordinate()), "C path scan as of " + r.coordinate());
    assertEquals(r.rows(), scan(c, "select k, v from public.kv_as_of_sql(?)", r.coordinate()), "SQL path scan as of " + r.coordinate());
    int n = 0;
    try (Statement st = c.createStatement()) {
      st.execute("set plan_cache_mode = force_generic_plan");
    }
    try (PreparedStatement cp = c.prepareStatement("select v from gnomon_t.kv_as_of(?) where k = ?");
        PreparedStatement sp = c.prepareStatement("select v from public.kv_as_of_sql(?) where k = ?")) {
      for (int k = 0; k <= KEYS + 1; k++) {
        int key = random.nextBoolean() ? k : KEYS + 1 - k;
        assertEquals(r.rows().get(key), point(cp, r.coordinate(), key), "C path point read of key " + key + " as of " + r.coordinate());
        assertEquals(r.rows().get(key), point(sp, r.coordinate(), key), "SQL path point read of key " + key + " as of " + r.coordinate());
        n++;
      }
      // custom plans (the key a constant while planning), as the first executions of a prepared read get
      try (Statement st = c.createStatement()) {
        st.execute("set plan_cache_mode = force_custom_plan");
      }
      for (int i = 0; i < 4; i++) {
        int key = random.nextInt(KEYS + 2);
        assertEquals(r.rows().get(key), point(cp, r.coordinate(), key),
            "C path point read of key " + key + " (custom plan) as of " + r.coordinate());
        n++;
      }
      // the function scan the node replaces (gnomon.c_key_scan = off, a plan made after it), and the node again in a
      // PL/pgSQL loop (one cached plan executed per key), rescanned under a nested loop, with a condition on another
      // column it keeps, and for "select *"
      int key = random.nextInt(KEYS + 2);
      try (Statement st = c.createStatement()) {
        st.execute("set plan_cache_mode = force_generic_plan");
        st.execute("set gnomon.c_key_scan = off");
      }
      try (PreparedStatement fp = c.prepareStatement("select v from gnomon_t.kv_as_of(?) where k = ?")) {
        assertEquals(r.rows().get(key), point(fp, r.coordinate(), key), "function scan point read of key " + key + " as of " + r.coordinate());
      } finally {
        try (Statement st = c.createStatement()) {
          st.execute("reset gnomon.c_key_scan");
        }
      }
      try (PreparedStatement lp = c.prepareStatement("select public.kv_loop(?, ?)")) {
        lp.setString(1, r.coordinate());
        lp.setInt(2, KEYS + 1);
        try (ResultSet rs = lp.executeQuery()) {
          rs.next();
          Integer[] got = (Integer[]) rs.getArray(1).getArray();
          for (int k = 0; k <= KEYS + 1; k++) {
            assertEquals(r.rows().get(k), got[k], "PL/pgSQL loop point read of key " + k + " as of " + r.coordinate());
          }
        }
        n += KEYS + 2;
      }
      try (PreparedStatement jp = c.prepareStatement("select g.i, x.v from generate_series(1, 3) g(i)"
          + " cross join lateral (select v from gnomon_t.kv_as_of(?) where k = ? and g.i > 0 and v is not distinct from v) x")) {
        jp.setString(1, r.coordinate());
        jp.setInt(2, key);
        int rows = 0;
        try (ResultSet rs = jp.executeQuery()) {
          while (rs.next()) {
            rows++;
            assertEquals(r.rows().get(key), (Integer) rs.getInt(2), "rescanned point read of key " + key + " as of " + r.coordinate());
          }
        }
        assertEquals(r.rows().containsKey(key) ? 3 : 0, rows, "rescanned point reads of key " + key + " as of " + r.coordinate());
      }
      try (PreparedStatement sp2 = c.prepareStatement("select * from gnomon_t.kv_as_of(?) where k = ? and v >= 0")) {
        sp2.setString(1, r.coordinate());
        sp2.setInt(2, key);
        try (ResultSet rs = sp2.executeQuery()) {
          Integer v = rs.next() ? rs.getInt(2) : null;
          assertTrue(!rs.next(), "two rows for key " + key);
          assertEquals(r.rows().get(key), v, "select * point read of key " + key + " as of " + r.coordinate());
        }
      }
    } finally {
      try (Statement st = c.createStatement()) {
        st.execute("reset plan_cache_mode");
      }
    }
    // the C test itself, row by row: true means the live row is the state as of the coordinate; false, that the
    // history holds a version of the key the coordinate cannot see
    try (PreparedStatement ps = c.prepareStatement(
        "select l.k, l.v, gnomon.row_visible_c(?, '" + trackXid + "'::xid8, " + tableId + ", l.xmin),"
            + " gnomon_t.kv_as_of_h(l.k, 9223372036854775807, ?)"
            + " from kv l")) {
      ps.setString(1, r.coordinate());
      ps.setString(2, r.coordinate());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int k = rs.getInt(1);
          boolean visible = rs.getBoolean(3);
          boolean unknown = rs.wasNull();
          boolean unchanged = rs.getBoolean(4);
          if (unknown) {
            outcomes[2]++;
          } else if (visible) {
            outcomes[0]++;
            assertEquals(r.rows().get(k), (Integer) rs.getInt(2), "row_visible_c says the live row of key " + k
                + " is its state as of " + r.coordinate());
            assertTrue(unchanged, "row_visible_c true, but the history has a version of key " + k + " invisible at " + r.coordinate());
          } else {
            outcomes[1]++;
            assertTrue(!unchanged, "row_visible_c false, but no version of key " + k + " is invisible at " + r.coordinate());
          }
        }
      }
    }
    return n;
  }

  private static TreeMap<Integer, Integer> scan(Connection c, String query, String coordinate) throws SQLException {
    TreeMap<Integer, Integer> rows = new TreeMap<>();
    try (PreparedStatement ps = c.prepareStatement(query)) {
      ps.setString(1, coordinate);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.put(rs.getInt(1), rs.getInt(2));
        }
      }
    }
    return rows;
  }

  private static Integer point(PreparedStatement ps, String coordinate, int key) throws SQLException {
    ps.setString(1, coordinate);
    ps.setInt(2, key);
    try (ResultSet rs = ps.executeQuery()) {
      Integer v = rs.next() ? rs.getInt(1) : null;
      assertTrue(!rs.next(), "two rows for key " + key + " as of " + coordinate);
      return v;
    }
  }

  /** The generic plan of a query whose coordinate is $1 (explain, costs off; not run). */
  private String plan(String query) throws SQLException {
    return plan(query, "reset gnomon.c_key_scan");
  }

  /** The same, with the module's point read node turned off. */
  private String planWithout(String query) throws SQLException {
    return plan(query, "set gnomon.c_key_scan = off");
  }

  private String plan(String query, String setting) throws SQLException {
    StringBuilder b = new StringBuilder();
    try (Connection c = connect(); Statement st = c.createStatement()) {
      st.execute(setting);
      st.execute("set plan_cache_mode = force_generic_plan");
      st.execute("prepare planned(text) as " + query);
      try (ResultSet rs = st.executeQuery("explain (costs off) execute planned('not read')")) {
        while (rs.next()) {
          b.append(rs.getString(1)).append('\n');
        }
      }
    }
    return b.toString();
  }
}
