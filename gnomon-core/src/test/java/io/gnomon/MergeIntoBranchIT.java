package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Merges into a branch write the branch's rows and their history set-based (gnomon.merge_apply), not through the
 * branch view's INSTEAD OF trigger: they must leave exactly what the trigger leaves (copy on write, tombstones, one
 * history row per write, g_xid and g_cxid), and never overwrite a row a concurrent writer of the branch changed.
 */
class MergeIntoBranchIT extends GnomonIT {
  private void items() throws SQLException {
    sql("create table item (id int primary key, name text not null, qty bigint not null default 0, note text)",
        "insert into item select g, 'item' || g, 10, null from generate_series(1, 12) g");
    gnomon().track("public.item");
  }


  /** A branch's own rows and history, without ids: what a branch's writes leave, comparable across branches. */
  private List<String> storage(String branch) throws SQLException {
    List<String> out = new ArrayList<>();
    String id = "(select branch_id from gnomon.branch where branch_name = '" + branch + "')";
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select 'row ' || b.id || ' del=' || b.g_del || ' new=' || (b.g_cxid = b.g_xid)"
            + " || ' ' || coalesce(b.name, '-') || ' ' || coalesce(b.qty::text, '-') || ' ' || coalesce(b.note, '-')"
            + " from gnomon_t.item_b b where b.g_branch = " + id + " order by b.id")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select 'history ' || h.id || ' ' || h.g_op::text || ' del=' || coalesce(h.g_del::text, '-')"
            + " || ' ' || coalesce(h.name, '-') || ' ' || coalesce(h.qty::text, '-') || ' ' || coalesce(h.note, '-')"
            + " from gnomon_t.item_bh h where h.g_branch = " + id + " order by h.id, h.g_vid")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  private String state(String branch) throws SQLException {
    return one("select string_agg(to_jsonb(x)::text, ' ' order by x.id) from gnomon_t.item_at(gnomon.point('" + branch
        + "')) x");
  }

  @Test
  void aMergeIntoABranchLeavesWhatItsViewWould() throws Exception {
    items();
    gnomon().branches().create("t");
    gnomon().branches().create("twin");
    for (String b : List.of("t", "twin")) {
      // a row written on the branch, a tombstone, a key only the branch has
      onBranch(b, "update item set qty = 11 where id = 1", "delete from item where id = 2",
          "insert into item (id, name) values (20, 'branch only')", "update item set note = 'b' where id = 5");
    }
    // main: a row the branch wrote (another column), rows it never wrote (update, delete), a new key, and a key the
    // branch deleted, written again on main (update against delete: the rule decides)
    sql("update item set name = 'main1' where id = 1", "update item set name = 'main3' where id = 3",
        "delete from item where id = 4", "insert into item (id, name, qty) values (30, 'main only', 3)",
        "update item set note = 'm' where id = 6", "delete from item where id = 5");
    gnomon().merges().setDeleteRule("public.item", io.gnomon.merge.DeleteRule.DELETE_WINS);

    List<MergeStep> plan = gnomon().merges().preview("main", "t");
    MergeResult r = gnomon().merges().merge("main", "t");
    assertEquals("applied", r.status(), r.toString());
    assertEquals(1, r.adds(), "30 inserted; " + plan);
    assertEquals(2, r.deletes(), "4 deleted, and 5 (deleted on main, updated on the branch: delete wins)");

    // the same writes through the twin's view, row by row through its INSTEAD OF trigger
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      st.execute("select gnomon.branch_use('twin', true)");
      for (MergeStep s : plan) {
        String sql = switch (s.action()) {
          case "update" -> "update item x set name = r.name, qty = r.qty, note = r.note"
              + " from jsonb_populate_record(null::public.item, ?::jsonb) r where x.id = r.id";
          case "insert" -> "insert into item select * from jsonb_populate_record(null::public.item, ?::jsonb)";
          case "delete" -> "delete from item x where x.id = (?::jsonb->>'id')::int";
          default -> null;
        };
        if (sql != null) {
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, s.action().equals("delete") ? s.key().toString() : s.result().toString());
            assertEquals(1, ps.executeUpdate(), s.toString());
          }
        }
      }
      c.commit();
    }
    assertEquals(state("twin"), state("t"), "the branch reads as the twin written through its view");
    assertEquals(storage("twin"), storage("t"), "rows, tombstones and history as the view's trigger writes them");
    assertTrue(storage("t").contains("row 4 del=true new=true - - -"), storage("t").toString());
    assertEquals(List.of(), gnomon().diff("public.item", Point.main(), Point.branch("t")).stream()
        .filter(d -> !List.of(1, 2, 20).contains(d.key().get("id").asInt())).toList(), "t has main's changes");
    assertEquals("nothing", gnomon().merges().merge("main", "t").status());
  }

  @Test
  void aConcurrentWriterOfTheBranchIsNeverOverwrittenBlindly() throws Exception {
    items();
    gnomon().branches().create("t");
    onBranch("t", "update item set qty = 11 where id = 1");
    sql("update item set name = 'main1' where id = 1", "update item set name = 'main3' where id = 3",
        "update item set name = 'main7' where id = 7");
    List<String> before = storage("t");
    // each case: a writer of the branch holds a row the merge must write (1: a row the branch has, 3: a key it
    // copies on write), commits once the merge waits for it, and the merge fails with 40001, writing nothing
    for (int id : new int[] {1, 3}) {
      try (Connection writer = connect();
          Statement st = writer.createStatement()) {
        writer.setAutoCommit(false);
        st.execute("select gnomon.branch_use('t', true)");
        st.execute("update item set qty = " + (100 + id) + " where id = " + id);
        int writerPid = pid(writer);
        CompletableFuture<MergeResult> merge = CompletableFuture.supplyAsync(() -> gnomon().merges().merge("main", "t"));
        awaitBlockedBy(writerPid, merge);
        writer.commit();
        ExecutionException e = assertThrows(ExecutionException.class, () -> merge.get(60, TimeUnit.SECONDS));
        GnomonException g = (GnomonException) e.getCause();
        assertEquals("40001", g.sqlState(), g.getMessage());
        assertTrue(g.retryable());
      }
      assertEquals(String.valueOf(100 + id), one("select qty::text from gnomon_t.item_at(gnomon.point('t')) where id = "
          + id), "the writer's change survived");
      assertEquals("item7", one("select name from gnomon_t.item_at(gnomon.point('t')) where id = 7"),
          "nothing of the failed merge was written");
    }
    assertFalse(storage("t").equals(before));
    // merged again: the writers' changes and main's, side by side
    MergeResult again = gnomon().merges().merge("main", "t");
    assertEquals("applied", again.status(), again.toString());
    assertEquals("main1 101", one("select name || ' ' || qty from gnomon_t.item_at(gnomon.point('t')) where id = 1"));
    assertEquals("main3 103", one("select name || ' ' || qty from gnomon_t.item_at(gnomon.point('t')) where id = 3"));
    assertEquals("main7", one("select name from gnomon_t.item_at(gnomon.point('t')) where id = 7"));
  }

  /** Waits (polling pg_locks, up to a minute) until a backend waits for a lock the writer holds. */
  private void awaitBlockedBy(int writerPid, CompletableFuture<?> merge) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (merge.isDone()) {
        merge.get(); // a merge that did not wait: its result or failure shows why
        throw new AssertionError("the merge finished without waiting for the writer");
      }
      if (!one("select count(*) from pg_stat_activity a where " + writerPid
          + " = any (pg_blocking_pids(a.pid))").equals("0")) {
        return;
      }
      Thread.onSpinWait();
      TimeUnit.MILLISECONDS.sleep(20);
    }
    throw new AssertionError("the merge never waited for the writer");
  }
}
