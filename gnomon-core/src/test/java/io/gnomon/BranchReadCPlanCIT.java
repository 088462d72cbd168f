package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The plan of a point read through a branch view with the C module's branch read (gnomon-c/src/branch.c): every arm
 * a plain index scan, whatever the statistics say. Small tables, as here, make the planner pick sequential scans and
 * bitmap scans for them, whose start-up asks the kernel for the relation's size on every read; the module's planner
 * hook (loaded at plan time by gnomon.branch_pick_c's support function) keeps only the plain index paths of an arm
 * that has a key condition. A full scan of the view keeps its sequential scans. A branch of main never reads the branch
 * history (its one level is read as it is): that arm is pruned when the statement starts (gnomon.branch_hist_bound_c), so
 * its point read starts three index scans (four for a scratch branch, which may read logged levels too); a branch of a
 * branch, four (five with the scratch partition).
 */
class BranchReadCPlanCIT extends GnomonIT {
  @Override
  boolean cWritePath() {
    return true;
  }

  private static List<String> plan(Statement st, String query) throws SQLException {
    List<String> lines = new ArrayList<>();
    try (ResultSet rs = st.executeQuery("explain (costs off) " + query)) {
      while (rs.next()) {
        lines.add(rs.getString(1));
      }
    }
    return lines;
  }

  private static long count(List<String> plan, String node) {
    return plan.stream().filter(l -> l.contains(node)).count();
  }

  @Test
  void aPointReadStartsPlainIndexScansOnly() throws Exception {
    sql("create table kv (k int primary key, v int)", "insert into kv select g, g from generate_series(1, 50) g");
    gnomon().track("public.kv");
    sql("select gnomon.branch_create('b1')", "select gnomon.branch_create('s1', scratch => true)");
    onBranch("b1", "update kv set v = -k where k % 5 = 0");
    onBranch("s1", "update kv set v = -2 * k where k % 7 = 0", "delete from kv where k = 3");
    // a branch of b1, then b1 written after its cutoff: c1 reads those keys from b1's branch history
    sql("select gnomon.branch_create('c1', 'b1')");
    onBranch("b1", "update kv set v = 1000 + k where k % 10 = 0", "insert into kv values (60, 60)");
    onBranch("c1", "update kv set v = 2000 + k where k % 11 = 0");
    sql("update kv set v = v + 100 where k % 3 = 0", "vacuum analyze");
    assertEquals("t", one("select gnomon.branch_c_enabled()"));
    assertEquals("gnomon.branch_pick_support", one("select prosupport::regproc::text from pg_proc"
        + " where oid = 'gnomon.branch_pick_c(integer, integer, integer, bigint, boolean, \"any\")'::regprocedure"));

    for (String branch : List.of("b1", "s1", "c1")) {
      try (Connection c = connect(); Statement st = c.createStatement()) {
        st.execute("select gnomon.branch_use('" + branch + "')");
        st.execute("set plan_cache_mode = force_generic_plan");
        st.execute("prepare q(int) as select v from kv where k = $1");
        List<String> generic = plan(st, "execute q(10)");
        assertEquals(0, count(generic, "Seq Scan"), branch + ", generic plan:\n" + String.join("\n", generic));
        assertEquals(0, count(generic, "Bitmap"), branch + ", generic plan:\n" + String.join("\n", generic));
        assertEquals(branch.equals("c1") ? 4 : branch.equals("s1") ? 4 : 3, count(generic, "Index Scan"),
            branch + ", generic plan:\n" + String.join("\n", generic));
        st.execute("set plan_cache_mode = force_custom_plan");
        List<String> custom = plan(st, "select v from kv where k = 10");
        assertEquals(0, count(custom, "Seq Scan") + count(custom, "Bitmap"), branch + ", custom plan:\n"
            + String.join("\n", custom));
        // the reads still return what the SQL read returns, for every key, by the generic plan too
        st.execute("set plan_cache_mode = force_generic_plan");
        for (int k = 0; k <= 61; k++) {
          String generic1;
          try (ResultSet rs = st.executeQuery("execute q(" + k + ")")) {
            generic1 = rs.next() ? rs.getString(1) : "-";
          }
          String c1;
          String sqlRead;
          try (ResultSet rs = st.executeQuery("select coalesce(string_agg(v::text, ','), '-') from kv where k = " + k)) {
            rs.next();
            c1 = rs.getString(1);
          }
          try (ResultSet rs = st.executeQuery("select coalesce(string_agg(v::text, ','), '-')"
              + " from gnomon_t.kv_at(gnomon.current_point()) where k = " + k)) {
            rs.next();
            sqlRead = rs.getString(1);
          }
          assertEquals(sqlRead, c1, branch + ", key " + k);
          assertEquals(sqlRead, generic1, branch + ", key " + k + ", generic plan");
        }
        // joins on the key (the view's scans parameterized by the other side, or needed on their own): the same rows
        st.execute("create temp table ids as select g as x from generate_series(0, 61, 3) g");
        st.execute("analyze ids");
        for (String join : List.of("ids o join kv a on a.k = o.x", "kv a left join ids o on a.k = o.x",
            "ids o left join kv a on a.k = o.x", "ids o full join kv a on a.k = o.x")) {
          String viaView = oneOn(st, "select count(*) || ':' || coalesce(sum(a.v), 0) || ':' || count(o.x) from " + join);
          String viaSql = oneOn(st, "select count(*) || ':' || coalesce(sum(a.v), 0) || ':' || count(o.x) from "
              + join.replace("kv a", "gnomon_t.kv_at(gnomon.current_point()) a"));
          assertEquals(viaSql, viaView, branch + ": " + join);
        }
        st.execute("drop table ids");
        // a full scan of the view has no key condition: the hook leaves its plan alone
        List<String> full = plan(st, "select * from kv");
        assertFalse(full.isEmpty());
        assertTrue(count(full, "Seq Scan") > 0, branch + ", full scan:\n" + String.join("\n", full));
      }
    }
    // the SQL read, with the module off, is planned as before (the hook acts only on gnomon.branch_pick_c's scans)
    sql("select gnomon.use_c_module(false)");
    leaveCPath();
    try (Connection c = connect(); Statement st = c.createStatement()) {
      st.execute("select gnomon.branch_use('b1')");
      assertEquals("b1:1010", "b1:" + oneOn(st, "select v from kv where k = 10"));
    }
  }
}
