package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Branch reads against brute force, seeded ({@code -Dgnomon.seed=N} replays): a chain of nested branches (some of them
 * scratch) whose every level, and main, keeps being written after its children were forked (each parent holding a row
 * for every key when a child is forked), so reads go through the image of an ancestor's row at a child's cutoff (gnomon_t.&lt;base&gt;_bimg) as well as through the branch rows,
 * main's history and main's live rows. A model in Java holds what each branch must read (its parent's state when it
 * was forked, then its own writes); every branch is read through its view (a full scan, and every key by a prepared
 * statement with the generic plan and with custom plans) and through {@code <base>_at}, now and as of coordinates
 * taken along the way.
 */
class BranchReadPathIT extends GnomonIT {
  private static final int KEYS = 12;

  private record AsOf(String branch, String coordinate, TreeMap<Integer, Integer> rows) {}

  @Test
  void everyReadPathMatchesTheModel() throws Exception {
    long seed = Seeds.seed("BranchReadPathIT");
    Random random = new Random(seed);
    sql("create table kv (k int primary key, v int not null)",
        "insert into kv select g, g from generate_series(1, " + KEYS + ") g");
    gnomon().track("public.kv");

    Map<String, TreeMap<Integer, Integer>> model = new HashMap<>();
    TreeMap<Integer, Integer> main = new TreeMap<>();
    for (int k = 1; k <= KEYS; k++) {
      main.put(k, k);
    }
    model.put("main", main);
    List<String> targets = new ArrayList<>(List.of("main"));
    List<AsOf> asOf = new ArrayList<>();
    int checks = 0;
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      int depth = 2 + random.nextInt(3);
      String parent = "main";
      boolean scratch = false;
      for (int level = 1; level <= depth; level++) {
        writeRounds(st, random, targets, model, 2);
        if (!parent.equals("main")) {
          // the parent holds a row for every key before the fork, so its later writes are read through their images
          st.execute("select gnomon.branch_use('" + parent + "')");
          st.executeUpdate("update kv set v = v + 1");
          model.get(parent).replaceAll((k, v) -> v + 1);
          st.execute("select gnomon.branch_use('main')");
        }
        String name = "l" + level;
        scratch = scratch || random.nextInt(3) == 0;
        gnomon().branches().create(name, parent, Optional.empty(), scratch);
        model.put(name, new TreeMap<>(model.get(parent)));
        targets.add(name);
        parent = name;
      }
      for (int round = 0; round < 6; round++) {
        writeRounds(st, random, targets, model, 3);
        String b = targets.get(1 + random.nextInt(targets.size() - 1));
        asOf.add(new AsOf(b, oneOf(st, "select gnomon.coordinate()"), new TreeMap<>(model.get(b))));
        for (String t : targets) {
          if (!t.equals("main")) {
            checks += check(st, seed, t, model.get(t));
          }
        }
      }
      st.execute("select gnomon.branch_use('main')");
      for (AsOf a : asOf) {
        assertEquals(a.rows(), read(st, "select k, v from gnomon_t.kv_at(gnomon.point('" + a.branch() + "', '"
            + a.coordinate() + "'))"), "seed " + seed + ": " + a.branch() + " as of " + a.coordinate());
      }
    }
    System.out.printf("BranchReadPathIT seed=%d: %d branches, %d reads checked, %d as-of reads%n", seed,
        targets.size() - 1, checks, asOf.size());
    assertTrue(checks > 0);
  }

  /** Reads a branch every way and compares with the model; returns the number of reads compared. */
  private static int check(Statement st, long seed, String branch, TreeMap<Integer, Integer> expected)
      throws SQLException {
    String at = "seed " + seed + ": branch " + branch;
    st.execute("select gnomon.branch_use('" + branch + "')");
    assertEquals(expected, read(st, "select k, v from kv"), at + ", full read through the view");
    assertEquals(expected, read(st, "select k, v from gnomon_t.kv_at(gnomon.point('" + branch + "'))"),
        at + ", full read through kv_at");
    int n = 2;
    for (String mode : new String[] {"force_generic_plan", "force_custom_plan"}) {
      st.execute("set plan_cache_mode = " + mode);
      st.execute("prepare one(int) as select v from kv where k = $1");
      TreeMap<Integer, Integer> byKey = new TreeMap<>();
      for (int k = 0; k <= KEYS + 3; k++) {
        String v = oneOrNull(st, "execute one(" + k + ")");
        if (v != null) {
          byKey.put(k, Integer.parseInt(v));
        }
        n++;
      }
      st.execute("deallocate one");
      assertEquals(expected, byKey, at + ", point reads through the view, " + mode);
    }
    st.execute("reset plan_cache_mode");
    st.execute("select gnomon.branch_use('main')");
    return n;
  }

  /** Random updates, inserts and deletes on random targets (main or a branch), each committed; the model follows. */
  private static void writeRounds(Statement st, Random random, List<String> targets,
      Map<String, TreeMap<Integer, Integer>> model, int rounds) throws SQLException {
    for (int i = 0; i < rounds * targets.size(); i++) {
      String t = targets.get(random.nextInt(targets.size()));
      TreeMap<Integer, Integer> m = model.get(t);
      st.execute("select gnomon.branch_use('" + t + "')");
      int k = 1 + random.nextInt(KEYS + 3);
      int op = random.nextInt(10);
      if (op < 6) {
        int d = 1 + random.nextInt(9);
        if (st.executeUpdate("update kv set v = v + " + d + " where k = " + k) == 1) {
          m.put(k, m.get(k) + d);
        }
      } else if (op < 8) {
        int v = random.nextInt(1000);
        if (st.executeUpdate("insert into kv select " + k + ", " + v + " where not exists (select 1 from kv where k = "
            + k + ")") == 1) {
          m.put(k, v);
        }
      } else if (st.executeUpdate("delete from kv where k = " + k) == 1) {
        m.remove(k);
      }
    }
    st.execute("select gnomon.branch_use('main')");
  }

  private static TreeMap<Integer, Integer> read(Statement st, String query) throws SQLException {
    TreeMap<Integer, Integer> out = new TreeMap<>();
    try (ResultSet rs = st.executeQuery(query)) {
      while (rs.next()) {
        out.put(rs.getInt(1), rs.getInt(2));
      }
    }
    return out;
  }

  private static String oneOf(Statement st, String query) throws SQLException {
    String v = oneOrNull(st, query);
    if (v == null) {
      throw new AssertionError("no row from " + query);
    }
    return v;
  }

  private static String oneOrNull(Statement st, String query) throws SQLException {
    try (ResultSet rs = st.executeQuery(query)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}
