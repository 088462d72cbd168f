package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The C read caches the selected branch's point per backend, keyed by the statement's snapshot, this transaction's xid
 * and its subtransaction (gnomon-c/src/branch.c, load_point). A read must still see exactly the catalog row its
 * snapshot sees: a branch created in a savepoint that was rolled back is gone (GN050) even though nothing committed
 * in between; a branch dropped by another session is gone for the next statement at READ COMMITTED, and still there,
 * with its rows, for a REPEATABLE READ transaction that read it before, as for the SQL read.
 */
class BranchPointCacheCIT extends GnomonIT {
  @Override
  boolean cWritePath() {
    return true;
  }

  private static String read(Statement st, String query) throws SQLException {
    try (ResultSet rs = st.executeQuery(query)) {
      return rs.next() ? rs.getString(1) : "-";
    }
  }

  @Test
  void aReadSeesTheCatalogRowItsSnapshotSees() throws Exception {
    sql("create table kv (k int primary key, v int)", "insert into kv values (1, 1), (2, 2)");
    gnomon().track("public.kv");
    assertEquals("t", one("select gnomon.branch_c_enabled()"));
    String viewRead = "select v from gnomon_b_public.kv where k = 1";
    String sqlRead = "select v from gnomon_t.kv_at(gnomon.current_point()) where k = 1";

    // a savepoint rolled back: nothing committed, the same snapshot bounds, another subtransaction
    try (Connection c = connect(); Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      String next = read(st, "select case when is_called then last_value + 1 else last_value end from gnomon.branch_seq");
      st.execute("select set_config('gnomon.branch', '" + next + "', true)");
      st.execute("savepoint s");
      assertEquals(next, read(st, "select gnomon.branch_create('in_savepoint')"));
      st.execute("update gnomon_b_public.kv set v = 10 where k = 1");
      assertEquals("10", read(st, viewRead));
      assertEquals("10", read(st, viewRead), "the second read, from the cached point");
      st.execute("rollback to savepoint s");
      SQLException gone = assertThrows(SQLException.class, () -> read(st, viewRead));
      assertEquals("GN050", gone.getSQLState(), "the branch was created in the savepoint rolled back");
      c.rollback();
    }

    sql("select gnomon.branch_create('dropped')");
    try (Connection a = connect(); Statement sa = a.createStatement()) {
      sa.execute("select gnomon.branch_use('dropped')");
      sa.execute("update kv set v = 20 where k = 1");
      assertEquals("20", read(sa, viewRead));
      assertEquals("20", read(sa, viewRead));
      // REPEATABLE READ: the drop commits after the transaction's snapshot; the branch and its rows stay
      a.setAutoCommit(false);
      a.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      assertEquals("20", read(sa, viewRead));
      sql("select gnomon.branch_drop('dropped')");
      assertEquals("20", read(sa, viewRead), "the transaction's snapshot still sees the branch");
      assertEquals(read(sa, sqlRead), read(sa, viewRead));
      a.commit();
      // READ COMMITTED: the next statement's snapshot sees the drop
      a.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      SQLException gone = assertThrows(SQLException.class, () -> read(sa, viewRead));
      assertEquals("GN050", gone.getSQLState());
      a.rollback();
      SQLException sqlGone = assertThrows(SQLException.class, () -> read(sa, sqlRead));
      assertEquals("GN050", sqlGone.getSQLState(), "the SQL read says the same");
      a.rollback();
    }
    assertTrue(one("select count(*) from gnomon.branch").equals("0"));
  }
}
