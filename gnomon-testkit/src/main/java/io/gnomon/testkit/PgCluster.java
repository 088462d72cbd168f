package io.gnomon.testkit;

import java.nio.file.Path;
import java.sql.Connection;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * A PostgreSQL server this JVM may use: a throwaway cluster the testkit started and controls, or an
 * existing server it only connects to.
 *
 * <p>Every handle can hand out connections and create and drop databases. Cluster control (stop,
 * start, crash, killing a backend, standbys) is available only on throwaway clusters; on other
 * servers those methods throw {@link UnsupportedOperationException}, and {@link #capabilities()}
 * says in advance which are available. Methods throw {@link PgClusterException} (unchecked) when
 * the server or a binary fails. Handles are thread-safe.
 *
 * <p>{@link #close()} stops a throwaway cluster and deletes its directory; for an existing server
 * it does nothing. Clusters the testkit started are also removed by a JVM shutdown hook, so a
 * failed test that never reaches {@code close()} leaves nothing behind.
 *
 * <pre>{@code
 * try (PgCluster pg = PostgresProvider.obtain()) {
 *   pg.createDatabase("orders");
 *   try (Connection c = pg.connect("orders")) { ... }
 * }
 * }</pre>
 */
public interface PgCluster extends AutoCloseable {

  /**
   * Returns where this server came from.
   *
   * @return the provisioning path that produced this handle
   */
  PgSource source();

  /**
   * Returns what this server supports beyond connecting.
   *
   * @return an unmodifiable set of capabilities
   */
  Set<PgCapability> capabilities();

  /**
   * Tells whether this server supports {@code capability}.
   *
   * @param capability the capability to test
   * @return {@code true} if the matching operations will not throw {@link
   *     UnsupportedOperationException}
   */
  default boolean supports(PgCapability capability) {
    return capabilities().contains(capability);
  }

  /**
   * Returns the host clients connect to ({@code 127.0.0.1} for throwaway clusters).
   *
   * @return the host name or address
   */
  String host();

  /**
   * Returns the TCP port the server listens on. A throwaway cluster keeps its port across {@link
   * #stop()}, {@link #crash()} and {@link #start()}.
   *
   * @return the port
   */
  int port();

  /**
   * Returns the database user connections are made as ({@code postgres}, a superuser, for
   * throwaway clusters).
   *
   * @return the user name
   */
  String user();

  /**
   * Returns a self-contained JDBC URL (host, port, user and any password) for {@code database}.
   *
   * @param database the database name, used verbatim (it is URL-encoded here)
   * @return a URL for {@link java.sql.DriverManager#getConnection(String)}
   */
  String jdbcUrl(String database);

  /**
   * Opens a new connection to {@code database}. The caller closes it.
   *
   * @param database the database name
   * @return a new connection in auto-commit mode
   * @throws PgClusterException if the connection fails
   */
  Connection connect(String database);

  /**
   * Returns a simple, unpooled {@link DataSource} for {@code database}; each {@code
   * getConnection()} opens a new connection.
   *
   * @param database the database name
   * @return a data source backed by {@link #jdbcUrl(String)}
   */
  DataSource dataSource(String database);

  /**
   * Creates an empty database (a copy of {@code template1}).
   *
   * @param name the new database's name, at most 63 bytes
   * @throws PgClusterException if the database exists or creation fails
   */
  void createDatabase(String name);

  /**
   * Creates a database as a copy of {@code template}. The template must have no open connections.
   *
   * @param name the new database's name, at most 63 bytes
   * @param template the database to copy
   * @throws PgClusterException if creation fails
   */
  void createDatabase(String name, String template);

  /**
   * Drops a database if it exists, first terminating its connections and clearing its template
   * flag.
   *
   * @param name the database's name
   * @throws PgClusterException if the drop fails
   */
  void dropDatabase(String name);

  /**
   * Tells whether the server process is running. Always {@code true} for servers the testkit does
   * not control.
   *
   * @return whether the postmaster is alive
   */
  boolean isRunning();

  /**
   * Starts a stopped or crashed cluster and waits until it accepts connections. After {@link
   * #crash()} this performs crash recovery.
   *
   * @throws IllegalStateException if the cluster is running or closed
   * @throws UnsupportedOperationException without {@link PgCapability#LIFECYCLE}
   * @throws PgClusterException if the server does not become ready in time (the message carries
   *     the end of the server log)
   */
  void start();

  /**
   * Stops the cluster with a fast shutdown (SIGINT: open transactions are rolled back) and waits
   * for the postmaster to exit. Does nothing if it is not running.
   *
   * @throws UnsupportedOperationException without {@link PgCapability#LIFECYCLE}
   */
  void stop();

  /**
   * {@link #stop() Stops} the cluster if it runs, then {@link #start() starts} it.
   *
   * @throws UnsupportedOperationException without {@link PgCapability#LIFECYCLE}
   */
  void restart();

  /**
   * Simulates a server crash: sends SIGKILL to the postmaster and to every process it left behind,
   * and waits until all are gone. Committed transactions survive the next {@link #start()}
   * (unless {@code synchronous_commit} is off); uncommitted ones do not.
   *
   * @throws IllegalStateException if the cluster is not running
   * @throws UnsupportedOperationException without {@link PgCapability#CRASH}
   */
  void crash();

  /**
   * Sends SIGKILL to one server process (a backend, obtainable with {@code select
   * pg_backend_pid()}). The postmaster then terminates every other session and reinitialises; this
   * method returns once the cluster accepts connections again.
   *
   * @param pid the process id of a child of this cluster's postmaster
   * @throws IllegalArgumentException if {@code pid} is not a child of this cluster's postmaster
   * @throws UnsupportedOperationException without {@link PgCapability#KILL_BACKEND}
   */
  void killBackend(int pid);

  /**
   * Creates a streaming-replication standby of this cluster ({@code pg_basebackup -R -X stream})
   * on another port, starts it and waits until it streams. With {@code synchronous}, the standby's
   * application name is added to this cluster's {@code synchronous_standby_names} and the method
   * waits until the primary reports it as synchronous; commits then wait for it as {@code
   * synchronous_commit} says. The standby is a read-only hot standby until {@link #promote()}d, and
   * is closed with this cluster. Unless the options set {@code wal_retrieve_retry_interval}, a
   * standby has it at 200 ms (PostgreSQL's default is 5 s): after a crash or a killed backend of
   * this cluster, the standby reconnects within 200 ms, so commits waiting for a synchronous
   * standby are not held up for seconds.
   *
   * @param synchronous whether commits on this cluster wait for the standby
   * @return the running standby
   * @throws IllegalStateException if this cluster is not running or its {@code wal_level} or
   *     {@code max_wal_senders} forbid streaming
   * @throws UnsupportedOperationException without {@link PgCapability#STANDBY}
   */
  PgCluster startStandby(boolean synchronous);

  /**
   * Promotes this standby to a primary that accepts writes, waiting until promotion is complete.
   * The former primary stops waiting for it if it was synchronous.
   *
   * @throws IllegalStateException if this cluster is not a running standby
   * @throws UnsupportedOperationException without {@link PgCapability#STANDBY}
   */
  void promote();

  /**
   * Returns the data directory of a throwaway cluster.
   *
   * @return the directory, or empty for servers the testkit does not control
   */
  Optional<Path> dataDirectory();

  /**
   * Returns the directory of the PostgreSQL binaries a throwaway cluster runs from, where client
   * tools of the same version live too ({@code pgbench}, {@code pg_waldump}, {@code psql}) for
   * local binaries.
   *
   * @return the directory, or empty for servers the testkit does not run
   */
  Optional<Path> binDirectory();

  /**
   * Returns the last lines of the server log, for diagnostics.
   *
   * @param lines how many lines at most
   * @return the log's last lines, or an empty string when the log is not accessible
   */
  String logTail(int lines);

  /**
   * Stops a throwaway cluster (immediate shutdown), closes its standbys and deletes its directory;
   * does nothing for an existing server. Idempotent.
   */
  @Override
  void close();
}
