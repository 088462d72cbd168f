package io.gnomon.testkit.internal;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCapability;
import io.gnomon.testkit.PgClusterException;
import io.gnomon.testkit.PgSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.testcontainers.containers.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A PostgreSQL container started by Testcontainers, the last resort when neither local nor
 * embedded binaries exist. Only databases are supported; the image is {@code postgres:15} unless
 * {@code -Dgnomon.pg.image} names another. Only loaded after {@link DockerProbe} found an engine.
 */
final class ContainerServer extends JdbcServer {

  static final String IMAGE_PROPERTY = "gnomon.pg.image";
  private static final String PASSWORD = "postgres";

  private final PostgreSQLContainer<?> container;
  private final Runnable unregister;

  private ContainerServer(PostgreSQLContainer<?> container) {
    this.container = container;
    this.unregister = ShutdownHooks.register("PostgreSQL container", this::close);
  }

  static ContainerServer start(ClusterOptions options) {
    String image = System.getProperty(IMAGE_PROPERTY, "postgres:15");
    PostgreSQLContainer<?> c =
        new PostgreSQLContainer<>(DockerImageName.parse(image).asCompatibleSubstituteFor("postgres"));
    c.withUsername("postgres").withPassword(PASSWORD).withDatabaseName("postgres");
    c.withStartupTimeout(options.startupTimeout());
    List<String> command = new ArrayList<>(List.of("postgres"));
    for (Map.Entry<String, String> e : options.settings().entrySet()) {
      command.add("-c");
      command.add(e.getKey() + "=" + e.getValue());
    }
    c.setCommand(command.toArray(new String[0]));
    try {
      c.start();
    } catch (RuntimeException e) {
      throw new PgClusterException(
          "Testcontainers could not start " + image + ": " + e.getMessage(), e);
    }
    return new ContainerServer(c);
  }

  @Override
  public PgSource source() {
    return PgSource.TESTCONTAINERS;
  }

  @Override
  public Set<PgCapability> capabilities() {
    return Set.of(PgCapability.DATABASES);
  }

  @Override
  public String host() {
    return container.getHost();
  }

  @Override
  public int port() {
    return container.getMappedPort(PostgreSQLContainer.POSTGRESQL_PORT);
  }

  @Override
  public String user() {
    return container.getUsername();
  }

  @Override
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://"
        + host()
        + ":"
        + port()
        + "/"
        + JdbcUrls.encode(database)
        + "?user="
        + JdbcUrls.encode(user())
        + "&password="
        + JdbcUrls.encode(PASSWORD);
  }

  @Override
  String adminDatabase() {
    return "postgres";
  }

  @Override
  String describe() {
    return "the Testcontainers PostgreSQL container " + container.getDockerImageName();
  }

  @Override
  String whyNoControl() {
    return "the testkit does not control the processes inside a container; install PostgreSQL"
        + " server binaries locally for a throwaway cluster that supports it";
  }

  @Override
  public boolean isRunning() {
    return container.isRunning();
  }

  @Override
  public void close() {
    try {
      container.stop();
    } finally {
      unregister.run();
    }
  }
}
