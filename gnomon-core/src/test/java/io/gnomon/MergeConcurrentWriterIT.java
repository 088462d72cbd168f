package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A merge into main plans without row locks and writes only rows still as it planned them: a row a concurrent writer
 * changes after the plan read it is re-planned with the writer's change as ours, never overwritten and never lost. The
 * writer here holds its change uncommitted while the merge plans (so the plan reads the row before it), and commits
 * once the merge's write waits for that row: the merge must then merge with the committed change, or, when the change
 * now conflicts, write nothing and report the conflict.
 */
class MergeConcurrentWriterIT extends GnomonIT {

  private void accounts() throws SQLException {
    sql("create table acct (id int primary key, name text, qty bigint not null default 0)",
        "insert into acct select g, 'a' || g, 100 from generate_series(1, 8) g");
    gnomon().track("public.acct");
    gnomon().merges().setStrategy("public.acct", "qty", "counter");
    gnomon().branches().create("f");
    onBranch("f", "update acct set qty = qty + 10 where id <= 4", "update acct set name = 'b5' where id = 5",
        "delete from acct where id = 6", "insert into acct values (100, 'b100', 1)");
  }

  /** Runs the merge on its own connection and returns once that connection waits for a row lock. */
  private CompletableFuture<String[]> mergeThatWaits(Connection m) throws Exception {
    int pid = Integer.parseInt(one(m, "select pg_backend_pid()"));
    CompletableFuture<String[]> merge = CompletableFuture.supplyAsync(() -> {
      try (Statement st = m.createStatement();
          ResultSet rs = st.executeQuery("select merge_id, status, adds, modifications, deletes, conflicts"
              + " from gnomon.merge('f', 'main')")) {
        rs.next();
        return new String[] {rs.getString(1), rs.getString(2) + " " + rs.getLong(3) + " " + rs.getLong(4) + " "
            + rs.getLong(5) + " " + rs.getLong(6)};
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while ("0".equals(one("select count(*) from pg_locks where pid = " + pid + " and not granted"))) {
      assertTrue(!merge.isDone(), () -> "the merge finished without waiting for the writer: " + merge.join()[1]);
      assertTrue(System.nanoTime() < deadline, "the merge did not reach the writer's row within 60 s");
      Thread.onSpinWait();
    }
    return merge;
  }

  private static String one(Connection c, String query) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Test
  void aRowChangedAfterThePlanIsMergedWithTheChangeNotOverwritten() throws Exception {
    accounts();
    try (Connection writer = connect();
        Connection m = connect()) {
      writer.setAutoCommit(false);
      try (Statement st = writer.createStatement()) {
        st.execute("update acct set qty = qty + 5 where id = 1"); // both sides add: counter
        st.execute("update acct set name = 'w2' where id = 2"); // another column than the branch's
        st.execute("insert into acct values (100, 'b100', 1)"); // the branch's insert, the same row
      }
      CompletableFuture<String[]> merge = mergeThatWaits(m);
      sql("update acct set qty = 7 where id = 8"); // writers of other rows do not wait
      writer.commit();
      String[] r = merge.get(60, TimeUnit.SECONDS);
      assertEquals("applied 0 5 1 0", r[1], "status adds modifications deletes conflicts");
    }
    assertEquals("a1 115", one("select name || ' ' || qty from acct where id = 1"), "100 + 10 (branch) + 5 (writer)");
    assertEquals("w2 110", one("select name || ' ' || qty from acct where id = 2"), "the writer's name kept");
    assertEquals("a3 110", one("select name || ' ' || qty from acct where id = 3"));
    assertEquals("b5 100", one("select name || ' ' || qty from acct where id = 5"));
    assertEquals("0", one("select count(*) from acct where id = 6"));
    assertEquals("b100 1", one("select name || ' ' || qty from acct where id = 100"), "inserted once, by the writer");
    assertEquals("7", one("select qty::text from acct where id = 8"));
    // every change is a version: the writer's and then the merge's on row 1, one merge version per merged row
    assertEquals("2", one("select count(*) from gnomon_t.acct_h where id = 1"));
    assertEquals("6", one("select count(*) from gnomon_t.acct_h h join gnomon.merge g on g.merge_xid = h.g_xid"),
        "rows 1-5 updated or deleted (row 6), none for the key the writer inserted as the branch did");
  }

  @Test
  void aRowThatNowConflictsStopsTheMergeWithNothingWritten() throws Exception {
    accounts();
    long history = Long.parseLong(one("select count(*) from gnomon_t.acct_h"));
    String[] r;
    try (Connection writer = connect();
        Connection m = connect()) {
      writer.setAutoCommit(false);
      try (Statement st = writer.createStatement()) {
        st.execute("update acct set name = 'w5' where id = 5"); // the branch renamed it too: fail
      }
      CompletableFuture<String[]> merge = mergeThatWaits(m);
      writer.commit();
      r = merge.get(60, TimeUnit.SECONDS);
      assertEquals("conflicts 1 4 1 1", r[1], "status adds modifications deletes conflicts");
    }
    assertEquals("a1 100", one("select name || ' ' || qty from acct where id = 1"), "nothing of the merge written");
    assertEquals("w5 100", one("select name || ' ' || qty from acct where id = 5"));
    assertEquals("1", one("select count(*) from acct where id = 6"));
    assertEquals("0", one("select count(*) from acct where id = 100"));
    assertEquals(history + 1, Long.parseLong(one("select count(*) from gnomon_t.acct_h")), "only the writer's version");
    assertEquals("{\"id\": 5} name \"w5\" \"b5\"", one("select key::text || ' ' || column_name || ' ' || ours::text || ' ' || theirs::text"
        + " from gnomon.merge_conflicts(" + r[0] + ")"), "the conflict names the writer's value as ours");
    gnomon().merges().resolve(Long.parseLong(r[0]), "public.acct", gnomon().merges().conflicts(Long.parseLong(r[0]))
        .get(0).key(), "name", "theirs", null);
    assertEquals("applied", gnomon().merges().merge("f", "main").status());
    assertEquals("b5 100", one("select name || ' ' || qty from acct where id = 5"));
    assertEquals("a1 110", one("select name || ' ' || qty from acct where id = 1"));
  }
}
