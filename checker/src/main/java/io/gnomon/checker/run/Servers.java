package io.gnomon.checker.run;

import io.gnomon.sql.internal.ConnectingDataSource;
import io.gnomon.testkit.PgCapability;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The servers of a run: the current primary, which changes at a failover, and its standby (synchronous, or
 * asynchronous when the run allows a failover to lose acknowledged commits). Connections always go to the current
 * primary, so clients move to the promoted standby by reconnecting.
 */
public final class Servers {
  private final PgCluster root;
  private final String database;
  private volatile PgCluster primary;
  private volatile PgCluster standby;
  private final boolean synchronous;

  /** @param synchronous whether standbys are synchronous (else asynchronous: a failover may lose commits) */
  public Servers(PgCluster root, String database, boolean synchronous) {
    this.root = root;
    this.database = database;
    this.primary = root;
    this.synchronous = synchronous;
  }

  /** Whether the standbys are synchronous. */
  public boolean synchronous() {
    return synchronous;
  }

  /** The cluster the run started, which owns every standby (closing it closes them). */
  public PgCluster root() {
    return root;
  }

  public String database() {
    return database;
  }

  public PgCluster primary() {
    return primary;
  }

  /** The synchronous standby, or null when there is none (yet). */
  public PgCluster standby() {
    return standby;
  }

  /** Whether the testkit controls the servers: kill -9, restart and failover are possible. */
  public boolean controlled() {
    return root.supports(PgCapability.CRASH) && root.supports(PgCapability.KILL_BACKEND);
  }

  /** Whether standbys can be made. */
  public boolean canReplicate() {
    return root.supports(PgCapability.STANDBY);
  }

  /** Makes a standby of the current primary and waits until it streams (and, if synchronous, is synchronous). */
  public PgCluster startStandby() {
    PgCluster s = primary.startStandby(synchronous);
    this.standby = s;
    return s;
  }

  /** After a failover: the promoted standby is the primary, and there is no standby until a new one is made. */
  void promoted(PgCluster s) {
    this.primary = s;
    this.standby = null;
  }

  /** A new connection to the current primary (autocommit on). */
  public Connection connect() throws SQLException {
    String url = primary.jdbcUrl(database);
    return DriverManager.getConnection(url + (url.contains("?") ? "&" : "?") + "socketTimeout=300&connectTimeout=10");
  }

  /** Connects, retrying while the primary restarts or fails over, for at most {@code patience}. */
  public Connection connect(Duration patience, java.util.function.BooleanSupplier giveUp) throws SQLException {
    long deadline = System.nanoTime() + patience.toNanos();
    SQLException last = null;
    long wait = 50;
    while (System.nanoTime() < deadline && !giveUp.getAsBoolean()) {
      try {
        return connect();
      } catch (SQLException e) {
        last = e;
      }
      try {
        Thread.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      wait = Math.min(1000, wait * 2);
    }
    throw last != null ? last : new SQLException("gave up connecting to " + database, "08001");
  }

  /** A data source that always connects to the current primary, for the ticker and the feed consumer. */
  public DataSource dataSource() {
    return new ConnectingDataSource() {
      @Override
      public Connection getConnection() throws SQLException {
        return connect();
      }

      @Override
      public Connection getConnection(String user, String password) throws SQLException {
        return connect();
      }
    };
  }

  /** Whether an error means the connection or the server went away (the operation's outcome may be unknown). */
  public static boolean connectionLost(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s) {
        String state = s.getSQLState();
        if (state != null && (state.startsWith("08") || state.startsWith("57P"))) {
          return true;
        }
        if (s instanceof java.sql.SQLRecoverableException) {
          return true;
        }
      }
    }
    return false;
  }
}
