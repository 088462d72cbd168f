package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgCapability;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PgClusterException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * What every kind of server shares: connections, data sources and database administration over
 * JDBC, and cluster-control methods that throw {@link UnsupportedOperationException} unless a
 * subclass overrides them.
 */
abstract class JdbcServer implements PgCluster {

  /** Returns the database administrative statements connect to. */
  abstract String adminDatabase();

  /** Describes this server for messages: kind, address and origin. */
  abstract String describe();

  /** Explains why cluster control is unavailable and what to do about it. */
  String whyNoControl() {
    return "the testkit does not control this server's processes";
  }

  @Override
  public Connection connect(String database) {
    Sql.checkDatabaseName("database", database);
    String url = jdbcUrl(database);
    try {
      return Jdbc.connect(url);
    } catch (SQLException e) {
      throw new PgClusterException(
          "Could not connect to database '"
              + database
              + "' at "
              + JdbcUrls.redact(url)
              + " ("
              + describe()
              + "): "
              + e.getMessage(),
          e);
    }
  }

  @Override
  public DataSource dataSource(String database) {
    Sql.checkDatabaseName("database", database);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(jdbcUrl(database));
    return ds;
  }

  @Override
  public void createDatabase(String name) {
    Sql.checkDatabaseName("database", name);
    admin(
        "create database '" + name + "'",
        st -> st.execute("CREATE DATABASE " + Sql.quoteIdent(name)));
  }

  @Override
  public void createDatabase(String name, String template) {
    Sql.checkDatabaseName("database", name);
    Sql.checkDatabaseName("template", template);
    admin(
        "create database '" + name + "' from template '" + template + "'",
        st ->
            st.execute(
                "CREATE DATABASE " + Sql.quoteIdent(name) + " TEMPLATE " + Sql.quoteIdent(template)));
  }

  @Override
  public void dropDatabase(String name) {
    Sql.checkDatabaseName("database", name);
    admin(
        "drop database '" + name + "'",
        st -> {
          Connection c = st.getConnection();
          try (PreparedStatement ps =
              c.prepareStatement("SELECT datistemplate FROM pg_database WHERE datname = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return;
              }
              if (rs.getBoolean(1)) {
                st.execute("ALTER DATABASE " + Sql.quoteIdent(name) + " IS_TEMPLATE false");
              }
            }
          }
          if (c.getMetaData().getDatabaseMajorVersion() >= 13) {
            st.execute("DROP DATABASE IF EXISTS " + Sql.quoteIdent(name) + " WITH (FORCE)");
          } else {
            try (PreparedStatement ps =
                c.prepareStatement(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?")) {
              ps.setString(1, name);
              ps.execute();
            }
            st.execute("DROP DATABASE IF EXISTS " + Sql.quoteIdent(name));
          }
        });
  }

  /** A statement to run on the administrative database. */
  @FunctionalInterface
  interface AdminWork {
    void run(Statement statement) throws SQLException;
  }

  /** Runs {@code work} on a new auto-commit connection to {@link #adminDatabase()}. */
  void admin(String what, AdminWork work) {
    try (Connection c = connect(adminDatabase());
        Statement st = c.createStatement()) {
      work.run(st);
    } catch (SQLException e) {
      throw new PgClusterException(
          "Could not " + what + " on " + describe() + ": " + e.getMessage(), e);
    }
  }

  /** Returns the current value of a server parameter ({@code SHOW}). */
  String show(String parameter) {
    String[] value = new String[1];
    admin(
        "read " + parameter,
        st -> {
          try (ResultSet rs = st.executeQuery("SHOW " + parameter)) {
            rs.next();
            value[0] = rs.getString(1);
          }
        });
    return value[0];
  }

  UnsupportedOperationException unsupported(String operation, PgCapability capability) {
    return new UnsupportedOperationException(
        operation
            + " is not supported by "
            + describe()
            + ": "
            + whyNoControl()
            + ". Check supports(PgCapability."
            + capability
            + ") before calling it.");
  }

  @Override
  public boolean isRunning() {
    return true;
  }

  @Override
  public void start() {
    throw unsupported("start()", PgCapability.LIFECYCLE);
  }

  @Override
  public void stop() {
    throw unsupported("stop()", PgCapability.LIFECYCLE);
  }

  @Override
  public void restart() {
    throw unsupported("restart()", PgCapability.LIFECYCLE);
  }

  @Override
  public void crash() {
    throw unsupported("crash()", PgCapability.CRASH);
  }

  @Override
  public void killBackend(int pid) {
    throw unsupported("killBackend(" + pid + ")", PgCapability.KILL_BACKEND);
  }

  @Override
  public PgCluster startStandby(boolean synchronous) {
    throw unsupported("startStandby(" + synchronous + ")", PgCapability.STANDBY);
  }

  @Override
  public void promote() {
    throw unsupported("promote()", PgCapability.STANDBY);
  }

  @Override
  public Optional<Path> dataDirectory() {
    return Optional.empty();
  }

  @Override
  public Optional<Path> binDirectory() {
    return Optional.empty();
  }

  @Override
  public String logTail(int lines) {
    return "";
  }

  @Override
  public String toString() {
    return describe();
  }
}
