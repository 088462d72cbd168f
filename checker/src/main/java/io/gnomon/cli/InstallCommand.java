package io.gnomon.cli;

import io.gnomon.sql.Catalog;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import org.postgresql.ds.PGSimpleDataSource;

/** {@code ./gnomon install}: installs or upgrades the {@code gnomon} catalog in an existing database. */
final class InstallCommand implements Command {

  @Override
  public String name() {
    return "install";
  }

  @Override
  public String summary() {
    return "Install or upgrade the gnomon catalog in an existing database";
  }

  @Override
  public String usage() {
    return """
        usage: %1$s install --url JDBC_URL [--user USER] [--password PASSWORD]

        Installs the gnomon catalog (schemas gnomon and gnomon_t: functions, catalog tables, event triggers)
        into an existing database, or upgrades it to this version, and prints the installed version.
        Running it again is harmless. Flyway applies the migrations and keeps its own history table,
        gnomon.flyway_schema_history.

        The user must be a superuser: the catalog creates event triggers that guard tracked tables
        against schema changes that would break versioning.

        options:
          --url JDBC_URL        the database, e.g. jdbc:postgresql://localhost:5432/app
          --user USER           the user to connect as (else the URL's user= parameter)
          --password PASSWORD   the user's password (else the URL's password= parameter)

        example:
          %1$s install --url jdbc:postgresql://localhost:5432/app --user postgres
        """
        .formatted(Main.PROGRAM);
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
    Options options = Options.parse(args, Set.of("url", "user", "password"), Set.of());
    String url = options.require("url");
    if (!url.startsWith("jdbc:postgresql:")) {
      throw new UsageException("--url must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database), got " + url);
    }
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    try {
      dataSource.setURL(url);
    } catch (IllegalArgumentException e) {
      throw new UsageException("--url is not a valid PostgreSQL JDBC URL: " + e.getMessage());
    }
    options.get("user").ifPresent(dataSource::setUser);
    options.get("password").ifPresent(dataSource::setPassword);
    dataSource.setApplicationName("gnomon install");

    String where;
    try (Connection c = dataSource.getConnection()) {
      DatabaseMetaData md = c.getMetaData();
      where = "database " + c.getCatalog() + " (PostgreSQL " + md.getDatabaseProductVersion() + ", user "
          + md.getUserName() + ")";
    } catch (SQLException e) {
      err.println(Main.PROGRAM + " install: cannot connect to " + withoutPassword(url) + ": " + e.getMessage());
      err.println("Check the URL, the user and the password, and that the server accepts connections.");
      return FAILED;
    }

    out.println("Installing the gnomon catalog into " + where + "...");
    int applied;
    try {
      applied = Catalog.install(dataSource);
    } catch (RuntimeException e) {
      err.println(Main.PROGRAM + " install: the installation failed and was rolled back: " + rootMessage(e));
      if ("42501".equals(sqlState(e))) {
        err.println("Installing needs a superuser (the catalog creates event triggers): connect as one, e.g. --user"
            + " postgres, or ask your administrator to run this command.");
      }
      return FAILED;
    }
    try (Connection c = dataSource.getConnection()) {
      int version = Catalog.installedVersion(c).orElseThrow();
      Catalog.check(c);
      out.println(applied == 0
          ? "The gnomon catalog is already at version " + version + "; nothing to do."
          : "Installed the gnomon catalog, version " + version + " (" + applied + " migrations applied).");
      out.println("Next: track a table with   select gnomon.track('public.my_table');");
      return OK;
    } catch (SQLException | RuntimeException e) {
      err.println(Main.PROGRAM + " install: the catalog was installed but cannot be checked: " + rootMessage(e));
      return FAILED;
    }
  }

  /** The URL without a password=… parameter, fit for messages. */
  static String withoutPassword(String url) {
    return url.replaceAll("(?i)([?&]password=)[^&]*", "$1***");
  }

  private static String sqlState(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && s.getSQLState() != null) {
        return s.getSQLState();
      }
    }
    return null;
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String state = sqlState(e);
    return root.getMessage() + (state == null ? "" : " [SQLSTATE " + state + "]");
  }
}
