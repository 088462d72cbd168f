package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.feed.internal.Transactions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A page runs in a transaction of its own at the isolation level asked for, and leaves the session as it found it:
 * {@code SET TRANSACTION} outside a transaction block is only a WARNING in PostgreSQL, so a page that sent it at
 * the wrong moment would read at READ COMMITTED without any error.
 */
class FeedTransactionsIT extends FeedTestBase {

  private static String show(Connection c, String setting) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("show " + setting)) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Test
  void theWorkRunsAtTheLevelAskedAndTheSessionKeepsItsOwn() throws Exception {
    try (Connection c = dataSource().getConnection()) {
      assertTrue(c.getAutoCommit());
      String session = show(c, "transaction_isolation");
      String inside = Transactions.run(c, Connection.TRANSACTION_REPEATABLE_READ, t -> {
        // one snapshot for the whole transaction: the same xid and the same level throughout
        return show(t, "transaction_isolation") + "/" + t.getAutoCommit();
      });
      assertEquals("repeatable read/false", inside);
      assertEquals(session, show(c, "transaction_isolation"), "the session's own level is left alone");
      assertTrue(c.getAutoCommit(), "autocommit is restored");

      // a failure rolls back and still restores the connection
      assertThrows(SQLException.class, () -> Transactions.run(c, Connection.TRANSACTION_SERIALIZABLE, t -> {
        assertEquals("serializable", show(t, "transaction_isolation"));
        try (Statement st = t.createStatement()) {
          st.execute("select 1/0");
        }
        return null;
      }));
      assertTrue(c.getAutoCommit());
      assertEquals(session, show(c, "transaction_isolation"));
    }
  }
}
