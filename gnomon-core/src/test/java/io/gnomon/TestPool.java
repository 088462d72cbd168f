package io.gnomon;

import io.gnomon.sql.internal.ConnectingDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayDeque;
import java.util.Deque;
import javax.sql.DataSource;

/**
 * A connection pool for tests that behaves as HikariCP does on the points that matter to Gnomon: a borrowed
 * connection comes in the pool's default autocommit mode (Spring applications often configure {@code autoCommit=false});
 * on return, an open transaction is rolled back, and autocommit, isolation and read-only are reset to the pool's
 * defaults; session settings ({@code set ...}, {@code set_config(..., false)}) are not reset, as no pool does. It
 * reuses its physical connections in LIFO order, so a test with one borrower at a time gets the same session back.
 */
final class TestPool extends ConnectingDataSource implements AutoCloseable {
  private final DataSource target;
  private final boolean autoCommit;
  private final Deque<Connection> idle = new ArrayDeque<>();
  private int physical;

  TestPool(DataSource target, boolean autoCommit) {
    this.target = target;
    this.autoCommit = autoCommit;
  }

  /** How many physical connections the pool opened. */
  synchronized int physicalConnections() {
    return physical;
  }

  @Override
  public Connection getConnection() throws SQLException {
    Connection real;
    synchronized (this) {
      real = idle.pollFirst();
    }
    if (real == null) {
      real = target.getConnection();
      synchronized (this) {
        physical++;
      }
    }
    real.setAutoCommit(autoCommit);
    real.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    return lend(real, this::giveBack);
  }

  private void giveBack(Connection real) throws SQLException {
    if (real.isClosed()) {
      return;
    }
    if (!real.getAutoCommit()) {
      real.rollback();
    }
    real.setAutoCommit(autoCommit);
    real.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    real.setReadOnly(false);
    synchronized (this) {
      idle.addFirst(real);
    }
  }

  @Override
  public synchronized void close() throws SQLException {
    for (Connection c : idle) {
      c.close();
    }
    idle.clear();
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException();
  }
}
