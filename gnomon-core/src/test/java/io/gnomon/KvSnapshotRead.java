package io.gnomon;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.TreeMap;

/**
 * What one REPEATABLE READ transaction saw of the test table {@code kv (k int, v int)}, with the coordinate it took:
 * the as-of property tests replay each such read as of its coordinate.
 */
record KvSnapshotRead(String coordinate, TreeMap<Integer, Integer> rows) {

  /** The coordinate and the table in the same REPEATABLE READ transaction; leaves c in autocommit, READ COMMITTED. */
  static KvSnapshotRead capture(Connection c) throws SQLException {
    c.setAutoCommit(false);
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    try (Statement st = c.createStatement()) {
      String coordinate;
      try (ResultSet rs = st.executeQuery("select gnomon.coordinate()")) {
        rs.next();
        coordinate = rs.getString(1);
      }
      TreeMap<Integer, Integer> rows = new TreeMap<>();
      try (ResultSet rs = st.executeQuery("select k, v from kv")) {
        while (rs.next()) {
          rows.put(rs.getInt(1), rs.getInt(2));
        }
      }
      c.commit();
      return new KvSnapshotRead(coordinate, rows);
    } finally {
      c.setAutoCommit(true);
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
  }
}
