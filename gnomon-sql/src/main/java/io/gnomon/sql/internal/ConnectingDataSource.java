package io.gnomon.sql.internal;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The part of a {@link DataSource} that Gnomon's own data sources share: no log writer, no login timeout, not a
 * wrapper. A subclass says how it gets a connection; one for other credentials is refused unless it says otherwise.
 */
public abstract class ConnectingDataSource implements DataSource {
  /** What a pool does with a connection its borrower closed. */
  @FunctionalInterface
  protected interface GiveBack {
    void giveBack(Connection real) throws SQLException;
  }

  /**
   * A pool's loan of {@code real}: closing it gives {@code real} back (once), and after that it says it is closed and
   * refuses every other call, as a pooled connection does.
   */
  protected static Connection lend(Connection real, GiveBack giveBack) {
    boolean[] closed = {false};
    return (Connection) Proxy.newProxyInstance(
        Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class},
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "close" -> {
              if (!closed[0]) {
                closed[0] = true;
                giveBack.giveBack(real);
              }
              return null;
            }
            case "isClosed" -> {
              return closed[0] || real.isClosed();
            }
            default -> {
              if (closed[0]) {
                throw new SQLException("connection is closed");
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            }
          }
        });
  }

  @Override
  public abstract Connection getConnection() throws SQLException;

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException(getClass().getSimpleName() + " connects only as it was configured to");
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {}

  @Override
  public void setLoginTimeout(int seconds) {}

  @Override
  public int getLoginTimeout() {
    return 0;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return false;
  }
}
