package io.gnomon.bench;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A data source that remembers the server process of the last connection it handed out, so that a measurement can
 * read that backend's CPU (a {@code FeedRunner} opens its connection itself).
 */
final class PidDataSource implements DataSource {
  private final DataSource delegate;
  private final AtomicLong pid = new AtomicLong(-1);

  PidDataSource(DataSource delegate) {
    this.delegate = delegate;
  }

  /** The backend pid of the last connection handed out, or -1. */
  long pid() {
    return pid.get();
  }

  @Override
  public Connection getConnection() throws SQLException {
    return remember(delegate.getConnection());
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    return remember(delegate.getConnection(user, password));
  }

  private Connection remember(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select pg_backend_pid()")) {
      rs.next();
      pid.set(rs.getLong(1));
    }
    return c;
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return delegate.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    delegate.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    delegate.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return delegate.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return delegate.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    return delegate.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return delegate.isWrapperFor(iface);
  }
}
