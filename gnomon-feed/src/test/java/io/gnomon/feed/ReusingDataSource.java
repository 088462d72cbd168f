package io.gnomon.feed;

import io.gnomon.sql.internal.ConnectingDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.ConcurrentLinkedDeque;
import javax.sql.DataSource;

/**
 * A minimal connection pool for tests, standing in for the pool an application would give the feed: {@code close()}
 * on a handed-out connection returns it (rolled back, autocommit on, READ COMMITTED) for reuse. Broken connections are
 * dropped. Opening a connection costs tens of milliseconds on a busy machine; reusing one costs nothing.
 */
final class ReusingDataSource extends ConnectingDataSource implements AutoCloseable {
  private final DataSource target;
  private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();

  ReusingDataSource(DataSource target) {
    this.target = target;
  }

  @Override
  public Connection getConnection() throws SQLException {
    Connection c;
    while ((c = idle.pollFirst()) != null) {
      if (c.isValid(5)) {
        return lend(c, this::giveBack);
      }
      c.close();
    }
    return lend(target.getConnection(), this::giveBack);
  }

  private void giveBack(Connection real) {
    try {
      if (real.isClosed()) {
        return;
      }
      if (!real.getAutoCommit()) {
        real.rollback();
        real.setAutoCommit(true);
      }
      if (real.getTransactionIsolation() != Connection.TRANSACTION_READ_COMMITTED) {
        real.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      idle.addFirst(real);
    } catch (SQLException e) {
      try {
        real.close();
      } catch (SQLException ignored) {
        // broken: dropped
      }
    }
  }

  @Override
  public void close() {
    Connection c;
    while ((c = idle.pollFirst()) != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // closing anyway
      }
    }
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("the test pool connects as the data source it wraps");
  }
}
