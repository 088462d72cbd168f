package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Plans and privileges: as-of functions are inlined, tracking leaves main's plans alone, history follows grants. */
class ReadPlansIT extends GnomonIT {

  private String plan(String query) throws SQLException {
    return one("select string_agg(line, E'\\n') from (select * from gnomon_test_explain(" + quoteLiteral(query) + ")) p(line)");
  }

  private static String quoteLiteral(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  private void explainHelper() throws SQLException {
    sql("create or replace function gnomon_test_explain(q text) returns setof text language plpgsql as"
        + " $$ declare l text; begin for l in execute 'explain (costs off' || case when q like '(verbose)%' then ', verbose) '"
        + " || substr(q, 10) else ') ' || q end loop return next l; end loop; end $$");
  }

  @Test
  void asOfPointReadsAreInlinedAndUseTheIndexes() throws Exception {
    explainHelper();
    sql("create table big (id int primary key, v int)", "insert into big select g, g from generate_series(1, 20000) g",
        "analyze big");
    gnomon().track("big");
    sql("update big set v = 0 where id <= 100");
    String c = coordinate();
    String p = plan("select * from gnomon_t.big_as_of('" + c + "') where id = 42");
    assertTrue(p.contains("Index Scan using big_pkey"), p);
    assertFalse(p.contains("Function Scan on big_as_of"), "the as-of function must be inlined:\n" + p);
    assertFalse(p.contains("Seq Scan on big"), p);
    // the coordinate is checked once, in a CTE of one node: every node a read starts costs on each execution of a
    // prepared read (its generic plan), and the check behind OFFSET 0 subqueries cost about a third of a point read
    String verbose = one("select string_agg(line, E'\\n') from (select * from gnomon_test_explain("
        + quoteLiteral("(verbose) select * from gnomon_t.big_as_of('" + c + "') where id = 42") + ")) p(line)");
    assertEquals(1, verbose.split("gnomon\\.check_coordinate_read\\(", -1).length - 1, verbose);
    assertEquals(1, verbose.split("Subquery Scan", -1).length - 1, "only the history arm's DISTINCT ON:\n" + verbose);
    assertTrue(verbose.matches("(?s).*CTE r\n\\s*->  Result\n.*"), verbose);
  }

  @Test
  void trackingChangesNoPlanOnMain() throws Exception {
    explainHelper();
    sql("create table m (id int primary key, k int, v text)", "create index on m (k)",
        "insert into m select g, g % 100, md5(g::text) from generate_series(1, 20000) g", "analyze m");
    List<String> queries = List.of("select * from m where id = 5", "select * from m where k = 3",
        "select count(*) from m", "update m set v = 'x' where id = 9", "delete from m where k = 1000");
    StringBuilder before = new StringBuilder();
    for (String q : queries) {
      before.append(plan(q)).append('\n');
    }
    String rowsBefore = one("select md5(string_agg(m::text, ',' order by id)) from m");
    gnomon().track("m");
    StringBuilder after = new StringBuilder();
    for (String q : queries) {
      after.append(plan(q)).append('\n');
    }
    assertEquals(before.toString(), after.toString());
    assertEquals(rowsBefore, one("select md5(string_agg(m::text, ',' order by id)) from m"));
  }

  @Test
  void historyIsReadableExactlyByWhoCanReadTheTable() throws Exception {
    // roles are cluster-wide: unique names keep reruns on a shared server apart
    String reader = "gnomon_reader_" + Long.toHexString(System.nanoTime());
    String outsider = "gnomon_outsider_" + Long.toHexString(System.nanoTime());
    sql("create role " + reader, "create role " + outsider,
        "create table secret (id int primary key, v text)", "grant select on secret to " + reader,
        "insert into secret values (1, 'a')");
    gnomon().track("secret");
    String c = coordinate();
    sql("update secret set v = 'b'");
    try (Connection conn = connect();
        Statement st = conn.createStatement()) {
      st.execute("set role " + reader);
      var rs = st.executeQuery("select v from gnomon_t.secret_as_of('" + c + "')");
      rs.next();
      assertEquals("a", rs.getString(1));
      st.execute("reset role");
      st.execute("set role " + outsider);
      SQLException e = assertThrows(SQLException.class, () -> st.executeQuery("select v from gnomon_t.secret_as_of('" + c + "')"));
      assertEquals("42501", e.getSQLState(), e.getMessage());
      e = assertThrows(SQLException.class, () -> st.executeQuery("select v from gnomon_t.secret_h"));
      assertEquals("42501", e.getSQLState());
      e = assertThrows(SQLException.class, () -> st.execute("insert into gnomon_t.secret_h (g_vid, g_xid, g_op, id) values (1, '1', 'I', 9)"));
      assertEquals("42501", e.getSQLState(), "nobody forges history");
      st.execute("reset role");
    }
  }

  @Test
  void grantsAndRevokesAfterTrackingReachHistoryAndBranches() throws Exception {
    String late = "gnomon_late_" + Long.toHexString(System.nanoTime());
    sql("create role " + late, "create table ledger (id int primary key, v text)", "insert into ledger values (1, 'a')");
    gnomon().track("ledger");
    String c = coordinate();
    sql("update ledger set v = 'b'", "select gnomon.branch_create('late_b')");
    String asOf = "select v from gnomon_t.ledger_as_of('" + c + "')";
    String onBranch = "select v from gnomon_b_public.ledger where id = 1";
    try (Connection conn = connect();
        Statement st = conn.createStatement()) {
      st.execute("select gnomon.branch_use('late_b')");
      st.execute("set role " + late);
      assertEquals("42501", assertThrows(SQLException.class, () -> st.executeQuery(asOf)).getSQLState(), "not granted yet");
      st.execute("reset role");

      sql("grant select, update on ledger to " + late);
      st.execute("set role " + late);
      var rs = st.executeQuery(asOf);
      assertTrue(rs.next());
      assertEquals("a", rs.getString(1), "a grant given after tracking reaches the history");
      rs = st.executeQuery(onBranch);
      assertTrue(rs.next());
      assertEquals("b", rs.getString(1), "and the branch view and tables");
      assertEquals(1, st.executeUpdate("update gnomon_b_public.ledger set v = 'c' where id = 1"), "UPDATE reaches the view");
      st.execute("reset role");

      sql("revoke select on ledger from " + late);
      st.execute("set role " + late);
      assertEquals("42501", assertThrows(SQLException.class, () -> st.executeQuery(asOf)).getSQLState(),
          "a revoke reaches the history");
      assertEquals("42501", assertThrows(SQLException.class, () -> st.executeQuery("select * from gnomon_t.ledger_b")).getSQLState());
      st.execute("reset role");

      sql("grant select on ledger to " + late, "alter table ledger enable row level security",
          "create policy none on ledger using (false)");
      st.execute("set role " + late);
      assertEquals("42501", assertThrows(SQLException.class, () -> st.executeQuery(asOf)).getSQLState(),
          "under row-level security only the owner reads history, whatever the grants");
      st.execute("reset role");
      assertEquals("0", one("select gnomon.sync_privileges('public.ledger')"), "the event triggers left nothing to do");
      assertEquals("GN001", assertThrows(SQLException.class, () -> one("select gnomon.sync_privileges('pg_class')")).getSQLState());
    } finally {
      sql("drop owned by " + late, "drop role " + late);
    }
  }
}
