package io.gnomon.feed.internal;

import io.gnomon.internal.Jdbc;
import java.sql.Connection;
import java.sql.SQLException;

/** Runs work in a transaction of its own on a connection in autocommit mode, or in the caller's transaction. */
public final class Transactions {
  private Transactions() {}

  /**
   * Runs {@code work}: inside the caller's transaction when {@code c} is not in autocommit mode, else in a
   * transaction of its own at {@code isolation} (a {@link Connection} constant), committed when the work returns and
   * rolled back when it throws. The connection's autocommit and isolation are restored.
   */
  public static <T> T run(Connection c, int isolation, Jdbc.Work<T> work) throws SQLException {
    if (!c.getAutoCommit()) {
      return work.run(c);
    }
    int previous = c.getTransactionIsolation();
    c.setAutoCommit(false);
    boolean done = false;
    try {
      if (previous != isolation) {
        c.setTransactionIsolation(isolation);
      }
      T result = work.run(c);
      c.commit();
      done = true;
      return result;
    } finally {
      try {
        if (!done && !c.isClosed()) {
          c.rollback();
        }
      } catch (SQLException ignored) {
        // the connection is probably gone; the original failure says why
      } finally {
        restore(c, previous);
      }
    }
  }

  private static void restore(Connection c, int isolation) {
    try {
      if (!c.isClosed()) {
        c.setAutoCommit(true);
        if (c.getTransactionIsolation() != isolation) {
          c.setTransactionIsolation(isolation);
        }
      }
    } catch (SQLException ignored) {
      // a broken connection: its pool or owner discards it
    }
  }
}
