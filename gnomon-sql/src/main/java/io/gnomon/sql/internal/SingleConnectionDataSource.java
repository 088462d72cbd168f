package io.gnomon.sql.internal;

import java.lang.reflect.Proxy;
import java.sql.Connection;

/** A data source that hands out one caller-owned connection, whose {@code close()} it ignores. */
public final class SingleConnectionDataSource extends ConnectingDataSource {
  private final Connection connection;

  /** Wraps the caller's connection; the caller keeps it and closes it. */
  public SingleConnectionDataSource(Connection connection) {
    this.connection = connection;
  }

  @Override
  public Connection getConnection() {
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("close")) {
                return null;
              }
              if (method.getName().equals("isClosed")) {
                return false;
              }
              try {
                return method.invoke(connection, args);
              } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Override
  public Connection getConnection(String user, String password) {
    return getConnection();
  }
}
