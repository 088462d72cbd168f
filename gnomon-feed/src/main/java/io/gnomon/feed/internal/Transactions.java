package io.gnomon.feed.internal;

import io.gnomon.internal.Jdbc;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Runs work in a transaction of its own on a connection in autocommit mode, or in the caller's transaction. */
public final class Transactions {
  private Transactions() {}

  /**
   * Runs {@code work}: inside the caller's transaction when {@code c} is not in autocommit mode, else in a
   * transaction of its own at {@code isolation} (a {@link Connection} constant), committed when the work returns and
   * rolled back when it throws. The connection's autocommit is restored; its session's isolation level is never
   * changed: the level is set for this transaction only ({@code SET TRANSACTION}, sent with its {@code BEGIN}), so a
   * page costs no {@code SHOW} and {@code SET SESSION CHARACTERISTICS} round trips before and after it.
   */
  public static <T> T run(Connection c, int isolation, Jdbc.Work<T> work) throws SQLException {
    if (!c.getAutoCommit()) {
      return work.run(c);
    }
    c.setAutoCommit(false);
    boolean done = false;
    try {
      try (Statement st = c.createStatement()) {
        st.execute("set transaction isolation level " + level(isolation));
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
        restore(c);
      }
    }
  }

  /** The SQL name of a {@link Connection} isolation constant. */
  static String level(int isolation) {
    return switch (isolation) {
      case Connection.TRANSACTION_READ_UNCOMMITTED -> "read uncommitted";
      case Connection.TRANSACTION_READ_COMMITTED -> "read committed";
      case Connection.TRANSACTION_REPEATABLE_READ -> "repeatable read";
      case Connection.TRANSACTION_SERIALIZABLE -> "serializable";
      default -> throw new IllegalArgumentException("no transaction isolation level is numbered " + isolation);
    };
  }

  private static void restore(Connection c) {
    try {
      if (!c.isClosed()) {
        c.setAutoCommit(true);
      }
    } catch (SQLException ignored) {
      // a broken connection: its pool or owner discards it
    }
  }
}
