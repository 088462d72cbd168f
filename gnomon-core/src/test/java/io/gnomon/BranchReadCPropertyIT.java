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
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The C module's branch read ({@code gnomon.branch_pick_c}, behind the branch views once {@code gnomon.use_c_module(true)})
 * against the SQL read of the same point ({@code gnomon_t.<base>_at(gnomon.current_point())}), seeded
 * ({@code -Dgnomon.seed=N} replays). Nested branches (depth 1 to 4, some scratch), random inserts, updates and deletes
 * on main and on every level — keys inserted on main after a branch's cutoff, deletes on both sides — some of them in
 * an open transaction with savepoints rolled back or released; after every step both reads of every branch (a full
 * scan, and every key by a prepared statement: generic and custom plans) must agree, inside the open transaction too
 * (the transaction's own writes, subtransactions included). Two tables: an integer key, and a two-column key with a
 * text column.
 */
class BranchReadCPropertyIT extends GnomonIT {
  private static final int KEYS = 10;

  @Override
  boolean cWritePath() {
    return true;
  }

  @Test
  void theCReadMatchesTheSqlRead() throws Exception {
    long seed = Seeds.seed();
    System.out.println("BranchReadCPropertyIT seed=" + seed + " (replay with -Dgnomon.seed=" + seed + ")");
    Random random = new Random(seed);
    sql("create table kv (k int primary key, v int not null)",
        "insert into kv select g, g from generate_series(1, " + KEYS + ") g",
        "create table kt (ka text, kb int, v int not null, primary key (ka, kb))",
        "insert into kt select 'key-' || (g % 4), g, g from generate_series(1, " + KEYS + ") g");
    gnomon().track("public.kv");
    gnomon().track("public.kt");
    assertEquals("t", one("select gnomon.branch_c_enabled()"), "the C branch read is enabled");
    // point reads in a loop: one cached plan of the branch view's read, executed per key
    sql("create function public.kv_loop(last int) returns int[] language plpgsql as $f$"
        + " declare r int[] := '{}'; x int; begin"
        + " for i in 0..last loop x := null; select v into x from kv where k = i; r := r || x; end loop;"
        + " return r; end $f$");

    List<String> targets = new ArrayList<>(List.of("main"));
    int checks = 0;
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      // every depth from 1 to 4 across seeds (the first values of java.util.Random barely differ between close seeds)
      int depth = 1 + (int) Math.floorMod(seed, 4L);
      String parent = "main";
      boolean scratch = false;
      for (int level = 1; level <= depth; level++) {
        writes(c, st, random, targets, 3, seed, false);
        String name = "l" + level;
        scratch = scratch || random.nextInt(4) == 0;
        gnomon().branches().create(name, parent, Optional.empty(), scratch);
        targets.add(name);
        parent = name;
        checks += checkAll(st, seed, targets, "after forking " + name);
      }
      for (int round = 0; round < 8; round++) {
        checks += writes(c, st, random, targets, 4, seed, random.nextBoolean());
        checks += checkAll(st, seed, targets, "round " + round);
      }
    }
    System.out.printf("BranchReadCPropertyIT seed=%d: %d branches, %d reads compared%n", seed, targets.size() - 1,
        checks);
    assertTrue(checks > 0);
  }

  /** Random writes on random targets; in one transaction with savepoints when {@code inTransaction}. */
  private int writes(Connection c, Statement st, Random random, List<String> targets, int n, long seed,
      boolean inTransaction) throws SQLException {
    int checks = 0;
    if (inTransaction) {
      c.setAutoCommit(false);
    }
    try {
      for (int i = 0; i < n * targets.size(); i++) {
        String t = targets.get(random.nextInt(targets.size()));
        boolean savepoint = inTransaction && random.nextInt(3) == 0;
        if (savepoint) {
          st.execute("savepoint s");
        }
        st.execute("select gnomon.branch_use('" + t + "', local => " + inTransaction + ")");
        write(st, random);
        if (inTransaction) {
          // inside the transaction, after its own writes (a savepoint's too): both reads of the target agree
          if (!t.equals("main")) {
            checks += check(st, seed, t, "in a transaction");
          }
          if (savepoint) {
            st.execute(random.nextBoolean() ? "rollback to savepoint s" : "release savepoint s");
            if (!t.equals("main")) {
              st.execute("select gnomon.branch_use('" + t + "', local => true)");
              checks += check(st, seed, t, "in a transaction, after its savepoint ended");
            }
          }
        }
        st.execute("select gnomon.branch_use('main', local => " + inTransaction + ")");
      }
    } finally {
      if (inTransaction) {
        if (random.nextInt(4) == 0) {
          c.rollback();
        } else {
          c.commit();
        }
        c.setAutoCommit(true);
      }
    }
    return checks;
  }

  private static void write(Statement st, Random random) throws SQLException {
    int k = 1 + random.nextInt(KEYS + 4);
    String kt = "ka = 'key-" + (k % 4) + "' and kb = " + k;
    int op = random.nextInt(10);
    if (op < 5) {
      st.executeUpdate("update kv set v = v + " + (1 + random.nextInt(9)) + " where k = " + k);
      st.executeUpdate("update kt set v = v + 1 where " + kt);
    } else if (op < 8) {
      st.executeUpdate("insert into kv select " + k + ", " + random.nextInt(1000)
          + " where not exists (select 1 from kv where k = " + k + ")");
      st.executeUpdate("insert into kt select 'key-" + (k % 4) + "', " + k + ", " + random.nextInt(1000)
          + " where not exists (select 1 from kt where " + kt + ")");
    } else {
      st.executeUpdate("delete from kv where k = " + k);
      st.executeUpdate("delete from kt where " + kt);
    }
  }

  private static int checkAll(Statement st, long seed, List<String> targets, String when) throws SQLException {
    int n = 0;
    for (String t : targets) {
      if (!t.equals("main")) {
        st.execute("select gnomon.branch_use('" + t + "')");
        n += check(st, seed, t, when);
        st.execute("select gnomon.branch_use('main')");
      }
    }
    return n;
  }

  /** The selected branch read through its views (the C read) and through the SQL read of the same point. */
  private static int check(Statement st, long seed, String branch, String when) throws SQLException {
    String at = "seed " + seed + ": branch " + branch + ", " + when;
    TreeMap<String, String> sqlKv = read(st, "select k::text, v::text from gnomon_t.kv_at(gnomon.current_point())");
    TreeMap<String, String> sqlKt = read(st, "select ka || '/' || kb, v::text from gnomon_t.kt_at(gnomon.current_point())");
    assertEquals(sqlKv, read(st, "select k::text, v::text from kv"), at + ", kv full scan");
    assertEquals(sqlKt, read(st, "select ka || '/' || kb, v::text from kt"), at + ", kt full scan");
    int n = 2;
    // a point read is the module's node (branch_scan.c), over the append it starts for keys written since the cutoff
    String plan = explain(st, "select v from kv where k = 3");
    assertTrue(plan.contains("Custom Scan (gnomon.branch_pick_c)") && plan.contains("Append"), at + ", plan: " + plan);
    for (String mode : new String[] {"force_generic_plan", "force_custom_plan", "node off"}) {
      if (mode.equals("node off")) {
        // the append alone, as before the node (gnomon.c_key_scan applies to plans made after it)
        st.execute("set gnomon.c_key_scan = off");
        st.execute("set plan_cache_mode = force_generic_plan");
      } else {
        st.execute("set plan_cache_mode = " + mode);
      }
      TreeMap<String, String> byKey = new TreeMap<>();
      TreeMap<String, String> byKeyKt = new TreeMap<>();
      try (PreparedStatement one = st.getConnection().prepareStatement("select v from kv where k = ?");
          PreparedStatement two = st.getConnection().prepareStatement("select v from kt where ka = ? and kb = ?")) {
        for (int k = 0; k <= KEYS + 4; k++) {
          one.setInt(1, k);
          try (ResultSet rs = one.executeQuery()) {
            if (rs.next()) {
              byKey.put(Integer.toString(k), rs.getString(1));
            }
          }
          two.setString(1, "key-" + (k % 4));
          two.setInt(2, k);
          try (ResultSet rs = two.executeQuery()) {
            if (rs.next()) {
              byKeyKt.put("key-" + (k % 4) + "/" + k, rs.getString(1));
            }
          }
          n += 2;
        }
      }
      assertEquals(sqlKv, byKey, at + ", kv point reads, " + mode);
      // kt keys with a != 'key-' || (b % 4) are not probed by key: compare the probed ones
      TreeMap<String, String> probed = new TreeMap<>(sqlKt);
      probed.keySet().removeIf(key -> !key.equals("key-" + (Integer.parseInt(key.substring(key.indexOf('/') + 1)) % 4)
          + key.substring(key.indexOf('/'))));
      assertEquals(probed, byKeyKt, at + ", kt point reads, " + mode);
      st.execute("reset gnomon.c_key_scan");
    }
    st.execute("reset plan_cache_mode");
    // rescanned under a nested loop, and re-executed from one cached plan in a PL/pgSQL loop
    int key = (int) Math.floorMod(seed + n, (long) KEYS + 4);
    TreeMap<String, String> lateral = read(st, "select g::text, x.v::text from generate_series(1, 3) g"
        + " cross join lateral (select v from kv where k = " + key + " and g > 1) x");
    TreeMap<String, String> expected = new TreeMap<>();
    if (sqlKv.containsKey(Integer.toString(key))) {
      expected.put("2", sqlKv.get(Integer.toString(key)));
      expected.put("3", sqlKv.get(Integer.toString(key)));
    }
    assertEquals(expected, lateral, at + ", rescanned point read of key " + key);
    TreeMap<String, String> looped = read(st, "select k::text, v from unnest(kv_loop(" + (KEYS + 4) + ")) with ordinality u(v, k)"
        + " where v is not null");
    TreeMap<String, String> shifted = new TreeMap<>();
    looped.forEach((k, v) -> shifted.put(Integer.toString(Integer.parseInt(k) - 1), v));
    assertEquals(sqlKv, shifted, at + ", point reads in a PL/pgSQL loop");
    return n + 1 + KEYS + 5;
  }

  private static String explain(Statement st, String query) throws SQLException {
    StringBuilder b = new StringBuilder();
    try (ResultSet rs = st.executeQuery("explain (costs off) " + query)) {
      while (rs.next()) {
        b.append(rs.getString(1)).append('\n');
      }
    }
    return b.toString();
  }

  private static TreeMap<String, String> read(Statement st, String query) throws SQLException {
    TreeMap<String, String> out = new TreeMap<>();
    try (ResultSet rs = st.executeQuery(query)) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getString(2));
      }
    }
    return out;
  }
}
