package io.gnomon.testkit;

import io.gnomon.testkit.internal.SharedServer;
import java.sql.Connection;
import javax.sql.DataSource;

/**
 * A database of its own for one test class (or test), on the shared server of {@link
 * TestDatabases}. Closing it drops it, ending any sessions still open.
 *
 * <pre>{@code
 * try (TestDatabase db = TestDatabases.fresh("orders_it", "gnomon")) {
 *   try (Connection c = db.connect()) { ... }
 * }
 * }</pre>
 */
public final class TestDatabase implements AutoCloseable {

  private final PgCluster server;
  private final String name;
  private volatile boolean closed;

  TestDatabase(PgCluster server, String name) {
    this.server = server;
    this.name = name;
  }

  /**
   * Returns the database's name.
   *
   * @return the name, such as {@code ordersit_3}
   */
  public String name() {
    return name;
  }

  /**
   * Returns the server the database lives on.
   *
   * @return the shared server
   */
  public PgCluster server() {
    return server;
  }

  /**
   * Returns a self-contained JDBC URL of the database (user and any password included).
   *
   * @return the URL
   */
  public String jdbcUrl() {
    return server.jdbcUrl(name);
  }

  /**
   * Opens a new connection in auto-commit mode. The caller closes it.
   *
   * @return the connection
   * @throws PgClusterException if connecting fails
   */
  public Connection connect() {
    return server.connect(name);
  }

  /**
   * Returns an unpooled data source for the database.
   *
   * @return a data source opening a new connection per {@code getConnection()}
   */
  public DataSource dataSource() {
    return server.dataSource(name);
  }

  /** Drops the database, terminating open sessions. Idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      SharedServer.drop(name);
    }
  }

  @Override
  public String toString() {
    return "database " + name + " on " + server;
  }
}
