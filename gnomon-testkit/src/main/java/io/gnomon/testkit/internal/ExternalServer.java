package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgCapability;
import io.gnomon.testkit.PgClusterException;
import io.gnomon.testkit.PgSource;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import java.util.Set;
import org.postgresql.Driver;

/**
 * An existing server named by a JDBC URL. The testkit only connects to it: it creates and drops
 * databases, and every cluster-control operation throws {@link UnsupportedOperationException};
 * {@link #close()} leaves the server alone.
 */
public final class ExternalServer extends JdbcServer {

  private final JdbcUrls.Parts url;
  private final String origin;
  private final String host;
  private final int port;
  private final String user;

  /**
   * Creates a handle without connecting.
   *
   * @param jdbcUrl a URL of the form {@code jdbc:postgresql://host:port/database?user=..&password=..}
   * @param origin where the URL came from, for messages ("environment variable GNOMON_JDBC_URL")
   * @throws IllegalArgumentException if the URL has another form
   */
  public ExternalServer(String jdbcUrl, String origin) {
    this.url = JdbcUrls.parse(jdbcUrl);
    this.origin = origin;
    Properties props = Driver.parseURL(jdbcUrl, null);
    if (props == null) {
      throw new IllegalArgumentException(
          origin + " holds '" + JdbcUrls.redact(jdbcUrl) + "', which pgjdbc cannot parse");
    }
    this.host = props.getProperty("PGHOST", "localhost").split(",")[0];
    this.port = Integer.parseInt(props.getProperty("PGPORT", "5432").split(",")[0]);
    this.user = props.getProperty("user", System.getProperty("user.name"));
  }

  /**
   * Connects once to make sure the server answers.
   *
   * @return this handle
   * @throws PgClusterException saying how to fix the URL or unset it
   */
  public ExternalServer verify() {
    try (Connection c = connect(adminDatabase())) {
      c.isValid(5);
      return this;
    } catch (PgClusterException | SQLException e) {
      throw new PgClusterException(
          origin
              + " names "
              + JdbcUrls.redact(url.withDatabase(adminDatabase()))
              + ", but connecting failed: "
              + e.getMessage()
              + ". Fix the URL (user and password go in its parameters) or unset it to let the"
              + " testkit start a throwaway cluster.",
          e);
    }
  }

  @Override
  public PgSource source() {
    return PgSource.EXISTING_SERVER;
  }

  @Override
  public Set<PgCapability> capabilities() {
    return Set.of(PgCapability.DATABASES);
  }

  @Override
  public String host() {
    return host;
  }

  @Override
  public int port() {
    return port;
  }

  @Override
  public String user() {
    return user;
  }

  @Override
  public String jdbcUrl(String database) {
    return url.withDatabase(database);
  }

  @Override
  String adminDatabase() {
    String db = URLDecoder.decode(url.database(), StandardCharsets.UTF_8);
    return db.isEmpty() ? "postgres" : db;
  }

  @Override
  String describe() {
    return "the existing server at " + JdbcUrls.redact(url.withDatabase(adminDatabase())) + " (from " + origin + ")";
  }

  @Override
  String whyNoControl() {
    return "the testkit only connects to existing servers and never controls their processes;"
        + " unset GNOMON_JDBC_URL / -Dgnomon.jdbc.url, or use PostgresProvider.startCluster(...),"
        + " to get a throwaway cluster that supports it";
  }

  @Override
  public void close() {
    // The server is not ours.
  }
}
