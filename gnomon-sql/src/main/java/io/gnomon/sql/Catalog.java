package io.gnomon.sql;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalInt;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Installs, upgrades and checks the {@code gnomon} catalog in a database.
 *
 * <p>Flyway applies the migrations under {@code io/gnomon/sql/migration} with its own history table,
 * {@code gnomon.flyway_schema_history}, never the host application's. Installing needs a superuser (the catalog
 * creates event triggers that guard tracked tables against DDL that would break versioning).
 */
public final class Catalog {
  /** The catalog version this library was built for; {@code gnomon.catalog_version()} must return it. */
  public static final int VERSION = 12;

  /** The Flyway history table, in the {@code gnomon} schema. */
  public static final String HISTORY_TABLE = "flyway_schema_history";

  private Catalog() {}

  /**
   * Installs or upgrades the catalog and returns the number of migrations applied (0 when already current).
   *
   * @param dataSource a data source whose user may create schemas, functions and event triggers
   */
  public static int install(DataSource dataSource) {
    MigrateResult result = flyway(dataSource).migrate();
    return result.migrationsExecuted;
  }

  /**
   * Installs or upgrades the catalog through the caller's connection (left open), for example to fill a template
   * database. Returns the number of migrations applied.
   */
  public static int install(Connection connection) {
    return install(new io.gnomon.sql.internal.SingleConnectionDataSource(connection));
  }

  /** The installed catalog version, or empty when no catalog is installed. */
  public static OptionalInt installedVersion(Connection connection) throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs =
            st.executeQuery(
                "select p.oid is not null from (select 1) x left join pg_proc p"
                    + " on p.proname = 'catalog_version' and p.pronamespace = to_regnamespace('gnomon')")) {
      rs.next();
      if (!rs.getBoolean(1)) {
        return OptionalInt.empty();
      }
    }
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("select gnomon.catalog_version()")) {
      rs.next();
      return OptionalInt.of(rs.getInt(1));
    }
  }

  /**
   * Checks that the installed catalog has this library's version.
   *
   * <p>Then checks that every tracked table has its write triggers, which a dump restored on a server without the
   * optional C module loses; the database then raises {@code GN072} naming the tables and the remedy.
   *
   * @throws CatalogVersionException when the catalog is missing or of another version, saying what to do
   * @throws SQLException {@code GN072} when tracked tables lack their write triggers
   */
  public static void check(Connection connection) throws SQLException {
    OptionalInt installed = installedVersion(connection);
    if (installed.isEmpty()) {
      throw new CatalogVersionException(
          "No Gnomon catalog is installed in database " + connection.getCatalog()
              + ". Install it with `./gnomon install --url JDBC_URL` or Gnomon.install(dataSource).",
          0);
    }
    if (installed.getAsInt() != VERSION) {
      throw new CatalogVersionException(
          "The Gnomon catalog in database " + connection.getCatalog() + " has version " + installed.getAsInt()
              + ", but this library needs version " + VERSION + ". "
              + (installed.getAsInt() < VERSION
                  ? "Upgrade it with `./gnomon install --url JDBC_URL` or Gnomon.install(dataSource)."
                  : "Use a Gnomon library of version " + installed.getAsInt() + " or later."),
          installed.getAsInt());
    }
    // every tracked table has its write triggers (a dump restored without the C module loses them): GN072 otherwise
    try (Statement st = connection.createStatement()) {
      st.execute("select gnomon.check_triggers()");
    }
  }

  /** The catalog's Flyway, for install and, with a target, for upgrade tests. */
  static Flyway flyway(DataSource dataSource) {
    return Flyway.configure()
        .dataSource(dataSource)
        .schemas("gnomon")
        .defaultSchema("gnomon")
        .table(HISTORY_TABLE)
        .locations("classpath:io/gnomon/sql/migration")
        .placeholderReplacement(false)
        .loggers("slf4j")
        .load();
  }
}
